/** Mutations of valid policy files, for test/hardening/fuzz-policy.test.ts. */
import type { PolicyError } from '../../common/types.js';
import type { Rng } from '../../bench/fuzz-rng.js';

/** Characters that matter to YAML, and some that merely look odd. */
const ALPHABET = [
  ':',
  '-',
  ' ',
  '  ',
  '\n',
  '\t',
  "'",
  '"',
  '*',
  '&',
  '!',
  '{',
  '}',
  '[',
  ']',
  '#',
  '%',
  '|',
  '>',
  '?',
  ',',
  '@',
  '`',
  '$',
  '~',
  '\\',
  '0',
  '9',
  'a',
  'Z',
  'é',
  '\u00a0',
  '\u2028',
  '\ufeff',
  '\0',
  '\r',
  '🙂',
];

/** Values a type swap puts in place of a scalar. */
const SWAPS = [
  'true',
  'false',
  '1',
  '-1',
  '1.5',
  '.inf',
  '.nan',
  '0x1F',
  'null',
  '~',
  '[]',
  '{}',
  '[a, b]',
  '{path: /x}',
  '"quoted"',
  "'single'",
  '2026-13-45T99:99:99Z',
  '2026-12-31',
  'yes',
  '|\n  block',
  '*anchor',
  '&a value',
  '!!binary aGk=',
  '${UNSET_FUZZ_VARIABLE}',
  '"\\0"',
  '',
];

/** The names of the mutations, for reporting. */
export const MUTATIONS = [
  'char-edit',
  'line-delete',
  'line-duplicate',
  'line-swap',
  'type-swap',
  'indent',
  'truncate',
  'splice',
] as const;

/** One of `MUTATIONS`. */
export type Mutation = (typeof MUTATIONS)[number];

function lines(text: string): string[] {
  return text.split('\n');
}

/** Apply one named mutation to `text`. */
export function mutateOnce(rng: Rng, text: string, kind: Mutation): string {
  const ls = lines(text);
  const at = rng.int(0, Math.max(0, ls.length - 1));
  switch (kind) {
    case 'char-edit': {
      const i = rng.int(0, text.length);
      const c = rng.pick(ALPHABET);
      const op = rng.int(0, 2);
      if (op === 0) return text.slice(0, i) + c + text.slice(i);
      if (op === 1) return text.slice(0, i) + text.slice(i + 1);
      return text.slice(0, i) + c + text.slice(i + 1);
    }
    case 'line-delete':
      ls.splice(at, 1);
      return ls.join('\n');
    case 'line-duplicate':
      ls.splice(at, 0, ls[at] ?? '');
      return ls.join('\n');
    case 'line-swap': {
      const other = rng.int(0, Math.max(0, ls.length - 1));
      [ls[at], ls[other]] = [ls[other] ?? '', ls[at] ?? ''];
      return ls.join('\n');
    }
    case 'type-swap': {
      // The value after a "key:" or a "- " on a random line that has one.
      const candidates = ls
        .map((l, i) => [i, /^(\s*(?:- )?[^:#]*:\s|\s*- )(.*)$/.exec(l)] as const)
        .filter(([, m]) => m !== null);
      if (candidates.length === 0) return text;
      const [i, m] = rng.pick(candidates);
      ls[i] = m![1] + rng.pick(SWAPS);
      return ls.join('\n');
    }
    case 'indent': {
      const line = ls[at] ?? '';
      const op = rng.int(0, 3);
      if (op === 0) ls[at] = ' '.repeat(rng.int(1, 4)) + line;
      else if (op === 1) ls[at] = line.replace(/^ {1,2}/, '');
      else if (op === 2) ls[at] = line.replace(/^ +/, (s) => '\t'.repeat(Math.ceil(s.length / 2)));
      else ls[at] = line.trimStart();
      return ls.join('\n');
    }
    case 'truncate':
      return text.slice(0, rng.int(0, text.length));
    case 'splice': {
      // A block of lines moved elsewhere: a paste in the wrong place.
      const n = rng.int(1, 4);
      const block = ls.splice(at, n);
      ls.splice(rng.int(0, ls.length), 0, ...block);
      return ls.join('\n');
    }
  }
}

/** One to three random mutations of `text`. */
export function mutate(rng: Rng, text: string): { text: string; kinds: Mutation[] } {
  const kinds: Mutation[] = [];
  let out = text;
  for (let i = rng.int(1, 3); i > 0; i--) {
    const kind = rng.pick(MUTATIONS);
    kinds.push(kind);
    out = mutateOnce(rng, out, kind);
  }
  return { text: out, kinds };
}

/** What is wrong with the position of a problem reported for `text` (undefined: nothing). */
export function badPosition(p: PolicyError, file: string, text: string): string | undefined {
  const max = text.split('\n').length + 1;
  if (p.file !== file) return `file ${p.file} is not ${file}`;
  if (!Number.isInteger(p.line) || p.line < 1 || p.line > max)
    return `line ${p.line} not in 1..${max}`;
  if (!Number.isInteger(p.column) || p.column < 1) return `column ${p.column} < 1`;
  if (typeof p.message !== 'string' || p.message.trim() === '') return 'empty message';
  return undefined;
}
