/**
 * What is wrong with a policy file's text before its meaning is read: bytes that are not UTF-8,
 * YAML syntax (with a hint that says how to fix it, at the place to fix), keys that are written
 * twice or are not names, and aliases.
 */
import { isAlias, isMap, isSeq, type Alias, type Document, type YAMLError } from 'yaml';
import type { PolicyError } from '../common/types.js';
import { oneLine } from './error-list.js';
import type { Pos } from './model.js';
import { keyString, type AnyNode, type Segment } from './yaml-locate.js';

/** The offset of the first byte that is not part of well-formed UTF-8, or -1. */
export function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c < 0x80) {
      i += 1;
      continue;
    }
    let n: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) n = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      n = 2;
      if (c === 0xe0) lo = 0xa0;
      if (c === 0xed) hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      n = 3;
      if (c === 0xf0) lo = 0x90;
      if (c === 0xf4) hi = 0x8f;
    } else return i;
    for (let k = 1; k <= n; k++) {
      const d = b[i + k];
      const [min, max] = k === 1 ? [lo, hi] : [0x80, 0xbf];
      if (d === undefined || d < min || d > max) return i;
    }
    i += n + 1;
  }
  return -1;
}

export function invalidUtf8Error(b: Buffer, offset: number, file: string): PolicyError {
  const lineStart = b.lastIndexOf(0x0a, offset - 1) + 1;
  let line = 1;
  for (let i = 0; i < lineStart; i++) if (b[i] === 0x0a) line += 1;
  const column = b.toString('utf8', lineStart, offset).length + 1;
  const hex = b[offset]!.toString(16).padStart(2, '0');
  const message = `not valid UTF-8 (byte 0x${hex}); save the file as UTF-8`;
  return { file, line, column, message };
}

function lowerFirst(s: string): string {
  return /^[A-Z][a-z]/.test(s) ? s[0]!.toLowerCase() + s.slice(1) : s;
}

const YAML_HINTS: Record<string, string> = {
  TAB_AS_INDENT: 'indent with spaces, never tabs',
  MISSING_CHAR: 'close every quote, [ and {',
  BAD_INDENT: 'indent the entries of one mapping or list by the same number of spaces',
  BLOCK_AS_IMPLICIT_KEY: 'is a ":" or a closing quote missing?',
  MULTILINE_IMPLICIT_KEY: 'a key must fit on one line; is a ":" or a closing quote missing?',
  UNEXPECTED_TOKEN: 'check the YAML syntax here',
  BAD_ALIAS: 'an alias is written *name and must follow an anchor &name',
  BAD_DQ_ESCAPE: 'inside "double quotes" write a backslash as \\\\, or use single quotes',
  BLOCK_IN_FLOW: 'inside [ ] and { } write everything on one line, or use indented "- " lines',
  KEY_OVER_1024_CHARS: 'shorten the key',
};

export function yamlError(
  e: YAMLError,
  doc: Document,
  source: string,
  at: (offset: number) => Pos,
): PolicyError {
  const start = e.pos[0];
  const raw = oneLine(e.message);
  if (/call stack/i.test(raw)) {
    return {
      ...at(start),
      message: 'invalid YAML: nested too deeply; a policy needs a few levels',
    };
  }
  switch (e.code) {
    case 'MULTIPLE_DOCS':
      return {
        ...at(start),
        message:
          'a second YAML document starts here; a policy file holds one: remove the "---" line, ' +
          'or move the rest to its own file listed under include',
      };
    case 'MISSING_CHAR': {
      const quote = /closing (["'])quote/.exec(raw)?.[1];
      if (quote !== undefined) {
        const open = openingQuote(source, start, quote);
        return {
          ...at(open),
          message: `invalid YAML: this ${quote}quote is never closed; add the closing ${quote}`,
        };
      }
      break;
    }
    case 'BAD_INDENT': {
      const flow = /end with an? ([\]}])/.exec(raw)?.[1];
      const open = flow === undefined ? undefined : unclosedFlow(doc.contents, start);
      if (flow !== undefined && open !== undefined) {
        const what = flow === '}' ? '{ mapping }' : '[ list ]';
        return {
          ...at(open),
          message: `invalid YAML: this ${what} is never closed; end it with ${flow} on the same line`,
        };
      }
      break;
    }
    case 'TAB_AS_INDENT':
      return {
        ...at(start),
        message: `invalid YAML: a tab used for indentation; indent with spaces`,
      };
    default:
      break;
  }
  const hint = YAML_HINTS[e.code] ?? 'fix the YAML syntax here';
  return { ...at(start), message: `invalid YAML: ${lowerFirst(raw)}; ${hint}` };
}

/** yaml's warning for a `*` followed by `:` (an alias whose name would end in a colon). */
const ALIAS_WITH_COLON = /alias ending in : is ambiguous/i;

/**
 * A key written as a bare pattern (`*:`, `*-dev:` under `servers:`): YAML reads the `*` as the
 * start of an alias, and the errors it then gives (indentation, map values) point elsewhere.
 * One error at each such key, saying to quote it; empty when there is none.
 */
export function starKeyErrors(
  source: string,
  warnings: readonly YAMLError[],
  at: (offset: number) => Pos,
): PolicyError[] {
  const out: PolicyError[] = [];
  for (const w of warnings) {
    if (!ALIAS_WITH_COLON.test(w.message)) continue;
    const lineStart = source.lastIndexOf('\n', w.pos[0] - 1) + 1;
    const lineEnd = source.indexOf('\n', lineStart);
    const line = source.slice(lineStart, lineEnd < 0 ? undefined : lineEnd);
    const m = /^(\s*(?:-\s+)?)(\*\S*?):?(?:\s|$)/.exec(line);
    if (m === null) continue;
    const key = m[2]!;
    out.push({
      ...at(lineStart + m[1]!.length),
      message: `invalid YAML: the key ${key} starts with *, which YAML reads as an alias, not a name; put the pattern in quotes: '${key}':`,
    });
  }
  return out;
}

export function yamlWarning(w: YAMLError): string {
  if (w.code === 'TAG_RESOLVE_FAILED') {
    return `${lowerFirst(oneLine(w.message))}; the tag is ignored: remove it`;
  }
  return `YAML: ${lowerFirst(oneLine(w.message))}`;
}

/** The start of the flow collection (`{...}`, `[...]`) left open where an error at `end` was found. */
function unclosedFlow(node: unknown, end: number): number | undefined {
  if (!isMap(node) && !isSeq(node)) return undefined;
  if (node.flow && node.range?.[1] === end) return node.range[0];
  const children: unknown[] = isMap(node) ? node.items.map((p) => p.value) : node.items;
  for (const child of children) {
    const found = unclosedFlow(child, end);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** The offset of the quote that opens the unclosed scalar ending at `end`. */
function openingQuote(source: string, end: number, quote: string): number {
  let i = Math.min(end, source.length) - 1;
  while (i >= 0) {
    if (source[i] === quote) {
      if (quote === "'" && source[i - 1] === "'") {
        i -= 2;
        continue;
      }
      let backslashes = 0;
      while (quote === '"' && source[i - 1 - backslashes] === '\\') backslashes += 1;
      if (backslashes % 2 === 0) return i;
    }
    i -= 1;
  }
  return end;
}

interface BadKey {
  node: AnyNode;
  segs: Segment[];
  duplicate: boolean;
}

/** Keys written twice in one mapping, and keys that are mappings or lists (`? [a]: x`). */
export function badKeys(doc: Document, node: unknown, segs: Segment[], out: BadKey[]): BadKey[] {
  if (isMap(node)) {
    // Compared as toJS names them: `1` and "1" are one key of a JavaScript object.
    const seen = new Set<string>();
    for (const pair of node.items) {
      const key: unknown = isAlias(pair.key) ? pair.key.resolve(doc) : pair.key;
      if (isMap(key) || isSeq(key)) {
        out.push({ node: pair.key as AnyNode, segs, duplicate: false });
        continue;
      }
      const name = keyString(key);
      const path = [...segs, name];
      if (seen.has(name)) out.push({ node: pair.key as AnyNode, segs: path, duplicate: true });
      seen.add(name);
      badKeys(doc, pair.value, path, out);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, i) => badKeys(doc, item, [...segs, i], out));
  }
  return out;
}

/** Every alias node in document order, without following them. */
export function collectAliases(node: unknown, out: Alias[]): Alias[] {
  if (isAlias(node)) out.push(node);
  else if (isMap(node)) {
    for (const pair of node.items) {
      collectAliases(pair.key, out);
      collectAliases(pair.value, out);
    }
  } else if (isSeq(node)) {
    for (const item of node.items) collectAliases(item, out);
  }
  return out;
}
