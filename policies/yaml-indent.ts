/**
 * One line indented by a space too many or too few is the most common slip in a policy file,
 * and YAML's own errors for it point at column 1 of the line with words about sequences,
 * implicit keys and quotes, often three of them for the one slip. When a line that YAML refused
 * lines up with no line it could belong to, this says so, with the columns it could take.
 */
import type { PolicyError } from '../common/types.js';
import type { Pos } from './model.js';

/** A column a later line may start at, and the line that opened it. */
interface Level {
  indent: number;
  line: number;
  /** Where it comes from: a list item's dash, or a key (a line's first key, or one after a dash). */
  kind: 'item' | 'key';
}

/** One line of the source, without its line end. */
interface Line {
  text: string;
  /** The offset of its first character in the source. */
  start: number;
}

function linesOf(source: string): Line[] {
  const out: Line[] = [];
  let start = 0;
  for (;;) {
    const end = source.indexOf('\n', start);
    const text = source.slice(start, end < 0 ? undefined : end);
    out.push({ text: text.endsWith('\r') ? text.slice(0, -1) : text, start });
    if (end < 0) return out;
    start = end + 1;
  }
}

const BLANK_OR_COMMENT = /^ *(#.*)?$/;

/** How many lines above a line its columns are looked for, and lines above an error checked. */
const LOOK_BACK = 500;

/**
 * Text before which a line-by-line reading of indentation means nothing: a block scalar (`|`,
 * `>`), a flow collection or a quoted string left open across lines, a tab, or a document marker.
 */
function lineByLineUnsafe(text: string): boolean {
  return (
    /(^|[\s:-])[|>][-+0-9]*\s*(#.*)?$/.test(text) ||
    /^(---|\.\.\.)(\s|$)/.test(text) ||
    text.includes('\t') ||
    unbalanced(text)
  );
}

/** Whether a line opens a quote, `[` or `{` that it does not close (comments aside). */
function unbalanced(text: string): boolean {
  let depth = 0;
  let quote = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote !== '') {
      if (c === '\\' && quote === '"') i++;
      else if (c === quote) quote = '';
      continue;
    }
    if (c === '#' && (i === 0 || text[i - 1] === ' ')) break;
    // A quote opens a scalar only where a scalar starts (`a: 'x'`, `- "y"`), not inside a word.
    if ((c === '"' || c === "'") && (i === 0 || /[\s:,[{-]/.test(text[i - 1]!))) quote = c;
    else if (c === '[' || c === '{') depth++;
    else if (c === ']' || c === '}') depth--;
  }
  return quote !== '' || depth !== 0;
}

/** The columns a line starts: its indentation, then one after each `- ` it begins with. */
function levelsOf(text: string, line: number): Level[] {
  const out: Level[] = [];
  let i = text.length - text.trimStart().length;
  for (;;) {
    if (text[i] === '-' && (text[i + 1] === ' ' || i + 1 === text.length)) {
      out.push({ indent: i, line, kind: 'item' });
      i += 1;
      while (text[i] === ' ') i++;
      if (i >= text.length || text[i] === '#') return out;
      continue;
    }
    out.push({ indent: i, line, kind: 'key' });
    return out;
  }
}

/** The first line (1-based) from `line` on that holds more than blanks and a comment. */
function nextWithText(lines: Line[], line: number): number {
  let l = line;
  while (l <= lines.length && BLANK_OR_COMMENT.test(lines[l - 1]!.text)) l++;
  return l;
}

/** Whether a line ends in a key whose value is the block below it (`roots:`, `- path:`). */
function opensBlock(text: string): boolean {
  return /:\s*(#.*)?$/.test(text);
}

/**
 * The columns open at line `index` (0-based): those of the nearest line above it, and of each
 * line above that with less indentation, up to the top level or the first left of `indent`.
 */
function openLevels(lines: Line[], index: number, indent: number): Level[] | undefined {
  const out: Level[] = [];
  let limit = Infinity;
  // Once a column left of `indent` is open, those further up change nothing asked of them.
  for (let k = index - 1; k >= 0 && limit > 0 && limit >= indent; k--) {
    // A file this deep is not read line by line here (each line would walk back through all).
    if (index - k > LOOK_BACK) return undefined;
    const text = lines[k]!.text;
    if (BLANK_OR_COMMENT.test(text)) continue;
    const levels = levelsOf(text, k + 1);
    if (levels[0]!.indent >= limit) continue;
    for (const l of levels) if (l.indent < limit) out.push(l);
    limit = levels[0]!.indent;
  }
  return out;
}

/** The error for line `index` when it lines up with nothing above it; undefined otherwise. */
function misIndentedLine(
  lines: Line[],
  index: number,
  at: (offset: number) => Pos,
): PolicyError | undefined {
  const line = lines[index]!;
  if (BLANK_OR_COMMENT.test(line.text) || line.text.includes('\t')) return undefined;
  const own = levelsOf(line.text, index + 1)[0]!;
  const levels = openLevels(lines, index, own.indent);
  if (levels === undefined) return undefined;
  if (levels.length === 0) {
    if (own.indent === 0) return undefined;
    // The first line with text: the policy's own keys start at the beginning of a line.
    return {
      ...at(line.start + own.indent),
      message:
        `invalid YAML: the file's first key is indented by ${spaces(own.indent)}; ` +
        'start the top-level keys (version, servers, …) at the beginning of the line',
    };
  }
  // Deeper than everything above, under a key that opens a block: the start of that block.
  const nearest = levels.reduce((a, b) => (b.indent > a.indent ? b : a));
  if (own.indent > nearest.indent && opensBlock(lines[nearest.line - 1]!.text)) return undefined;
  const same = levels.filter((l) => l.indent === own.indent);
  const keyAtDash = own.kind === 'key' && same.length > 0 && same.every((l) => l.kind === 'item');
  const itemAtKey = own.kind === 'item' && same.length > 0 && same.every((l) => l.kind === 'key');
  if (itemAtKey) {
    // A list may start at its key's own column (`roots:` then `- path:` under the r), but then
    // all its items do; at the column of a key that holds a value it starts nothing.
    const key = same[0]!;
    const start = nextWithText(lines, key.line + 1);
    const startLevel = start < index + 1 ? levelsOf(lines[start - 1]!.text, start)[0]! : undefined;
    if (opensBlock(lines[key.line - 1]!.text) && startLevel === undefined) return undefined;
    if (opensBlock(lines[key.line - 1]!.text) && startLevel?.kind === 'item') {
      if (startLevel.indent === own.indent) return undefined;
      return {
        ...at(line.start + own.indent),
        message:
          `invalid YAML: this list item is indented by ${spaces(own.indent)}, but the first ` +
          `item of its list (line ${start}) by ${spaces(startLevel.indent)}; indent the items of ` +
          'one list by the same number of spaces',
      };
    }
  } else if (same.length > 0 && !keyAtDash) return undefined;
  const below = levels.filter((l) => l.indent < own.indent).sort((a, b) => b.indent - a.indent)[0];
  const above = levels.filter((l) => l.indent > own.indent).sort((a, b) => a.indent - b.indent)[0];
  // The nearest line above (the first of `levels`), or one that set the columns on either side.
  const first = [levels[0]!.line, above?.line, below?.line]
    .filter((l): l is number => l !== undefined)
    .map((l) => offBlockStart(lines, l, own.indent))
    .find((f) => f !== undefined);
  if (first !== undefined) {
    // The line that started the block is the odd one: the lines after it agree with the file.
    return {
      ...at(lines[first.line - 1]!.start + first.indent),
      message:
        `invalid YAML: this line is indented by ${spaces(first.indent)}, but line ` +
        `${own.line}, in the same block under "${keyAt(lines[first.opener.line - 1]!.text, first.opener.indent)}" ` +
        `(line ${first.opener.line}), by ${spaces(own.indent)}; indent the lines of one block ` +
        'by the same number of spaces',
    };
  }
  if (keyAtDash) {
    // `readOnly: true` under `- path: x`, at the dash's column: neither in the item nor a new one.
    const item = same[0]!;
    const inside = levels.find((l) => l.line === item.line && l.indent > item.indent);
    const into =
      inside === undefined
        ? ''
        : `indent it by ${spaces(inside.indent)} to put it in that item, or `;
    return {
      ...at(line.start + own.indent),
      message:
        `invalid YAML: this key lines up with the dash of the list item on line ${item.line}, ` +
        `so it is neither in that item nor an item of its own; ${into}start it with "- " to ` +
        'make it a new item',
    };
  }
  const describe = (l: Level) =>
    `${l.kind === 'item' ? 'the list item' : `"${keyAt(lines[l.line - 1]!.text, l.indent)}"`} ` +
    `on line ${l.line} at ${spaces(l.indent)}`;
  const choices = [above, below].filter((l): l is Level => l !== undefined).map(describe);
  return {
    ...at(line.start + own.indent),
    message:
      `invalid YAML: this line is indented by ${spaces(own.indent)}, which lines up with no line ` +
      `above it (${choices.join('; ')}); indent it by as many spaces as the lines it belongs with`,
  };
}

/**
 * When line `start` (1-based) is the first of a block (the line above it with text is a key
 * that opens one) and is indented by other than the file's usual step, while a later line of
 * the block at `indent` would line up with it had it the usual step: that first line, as the
 * slip to name. Otherwise undefined.
 */
function offBlockStart(
  lines: Line[],
  start: number,
  indent: number,
): { line: number; indent: number; opener: Level } | undefined {
  let o = start - 1;
  while (o >= 1 && BLANK_OR_COMMENT.test(lines[o - 1]!.text)) o--;
  if (o < 1 || !opensBlock(lines[o - 1]!.text)) return undefined;
  const openerLevels = levelsOf(lines[o - 1]!.text, o);
  const opener = openerLevels[openerLevels.length - 1]!;
  const firstLevels = levelsOf(lines[start - 1]!.text, start);
  const first = firstLevels[0]!.indent;
  if (first <= opener.indent) return undefined;
  const shift = opener.indent + usualStep(lines) - first;
  if (shift === 0 || !firstLevels.some((l) => l.indent + shift === indent)) return undefined;
  return { line: start, indent: first, opener };
}

/** How far the file's blocks are indented from the keys that open them, most often (2 if none). */
function usualStep(lines: Line[]): number {
  const counts = new Map<number, number>();
  for (let k = 1; k < lines.length; k++) {
    const text = lines[k - 1]!.text;
    if (BLANK_OR_COMMENT.test(text) || !opensBlock(text)) continue;
    let n = k + 1;
    while (n <= lines.length && BLANK_OR_COMMENT.test(lines[n - 1]!.text)) n++;
    if (n > lines.length) break;
    const o = levelsOf(text, k);
    const step = levelsOf(lines[n - 1]!.text, n)[0]!.indent - o[o.length - 1]!.indent;
    if (step > 0) counts.set(step, (counts.get(step) ?? 0) + 1);
  }
  let best = 2;
  let most = 0;
  for (const [step, n] of counts)
    if (n > most || (n === most && step < best)) [best, most] = [step, n];
  return best;
}

function spaces(n: number): string {
  return n === 1 ? '1 space' : `${n} spaces`;
}

/** The key (or the start of the text) at column `indent` of a line, for a message. */
function keyAt(text: string, indent: number): string {
  const rest = text.slice(indent);
  const colon = rest.search(/:(\s|$)/);
  const key = colon > 0 ? rest.slice(0, colon + 1) : rest;
  return key.length > 40 ? `${key.slice(0, 39)}…` : key;
}

/**
 * The first line, among those YAML's errors stand at (each error's range, and the next line
 * with text after its start), that lines up with no line above it: one error saying so, and
 * `explains`, which tells which of YAML's errors come from that slip. Those are the errors from
 * the line above it on: a line out of place makes YAML read what follows it in another
 * structure, and the errors it then gives (dozens, for a file's first key) point elsewhere.
 * Only the first slip is named, as a compiler names its first syntax error: the lines after it
 * are measured against it, and would be named for it.
 */
export function indentErrors(
  source: string,
  errorRanges: readonly (readonly [number, number])[],
  at: (offset: number) => Pos,
): { errors: PolicyError[]; explains: (range: readonly [number, number]) => boolean } {
  const lines = linesOf(source);
  const lineOf = (offset: number) => at(Math.min(offset, source.length)).line;
  const candidates = new Set<number>([nextWithText(lines, 1)]);
  // A slip can stand some lines above where YAML first notices it.
  let firstError = Infinity;
  for (const [from] of errorRanges) firstError = Math.min(firstError, lineOf(from));
  for (let l = Math.max(1, firstError - LOOK_BACK); l < firstError; l++) candidates.add(l);
  for (const [from, to] of errorRanges) {
    const first = lineOf(from);
    for (let l = first; l <= lineOf(Math.max(from, to)); l++) candidates.add(l);
    candidates.add(nextWithText(lines, first));
  }
  // Lines from the first that cannot be read one by one on are left to YAML's own errors.
  let readable = 0;
  while (readable < lines.length && !lineByLineUnsafe(lines[readable]!.text)) readable++;
  for (const line of [...candidates].sort((a, b) => a - b)) {
    if (line < 1 || line > lines.length || line > readable + 1) continue;
    // Above the first error YAML read the line, so a line that is no key or item there is the
    // rest of a value written over two lines, indented as it likes.
    if (line < firstError && !/^ *(- |-$|[^\s#][^:]*:(\s|$))/.test(lines[line - 1]!.text)) continue;
    const error = misIndentedLine(lines, line - 1, at);
    if (error === undefined) continue;
    let above = error.line - 1;
    while (above > 1 && BLANK_OR_COMMENT.test(lines[above - 1]!.text)) above--;
    return { errors: [error], explains: ([from]) => lineOf(from) >= above };
  }
  return { errors: [], explains: () => false };
}
