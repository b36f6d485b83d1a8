/**
 * A pushed `list_changed` read by what changed since the one before it for the same server.
 *
 * The daemon sends a subscribed server's whole list with every change (docs/protocol.md): at
 * 100,000 roots that is a 9.7 MB line, and `JSON.parse` of it took 100–280 ms of the client's CPU
 * here, per push, to learn of one new folder (bench/FINDINGS.md, eleventh step). Two consecutive
 * lists differ in a few bytes, so the line is compared with the last one, byte for byte (a
 * `memcmp`, about 1 ms for 10 MB): the roots wholly inside the same leading and trailing bytes
 * are the objects of the last list, and only the bytes between are parsed.
 *
 * The result is exactly `JSON.parse` of the line. JSON is read left to right, so bytes equal to
 * the last line's up to a point leave a parser in the same state there, and the roots they hold
 * are the same values. The changed middle is parsed alone, as `[`…`]`; it must parse, and begin
 * and end at the commas between roots, so that the parser is back between two roots of the same
 * array where the trailing equal bytes begin; from there the same bytes give the same roots and
 * the same end of the line. Anything else (another shape of header, whitespace between tokens,
 * a middle that does not parse, no last line to compare with) is read by the caller's full parse.
 *
 * Roots that did not change are therefore the same objects in consecutive lists: they must not
 * be changed by whoever receives them (docs/protocol.md, TypeScript).
 */
import { isAscii } from 'node:buffer';
import type { Root } from '../common/types.js';
import type { ListChangedParams } from './methods.js';

/** The start of a `list_changed` line as the daemon writes it, up to the server's name. */
const HEAD = Buffer.from(
  '{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":{"server":',
);
/** The rest of the header: server, revision and instance, then the roots array opens. */
// JSON strings without raw control characters, as JSON requires.
const HEADER =
  // eslint-disable-next-line no-control-regex
  /^"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*","revision":-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?,"instance":"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*","roots":\[/;
/** The header is read from at most this many bytes after `HEAD` (a server name has ≤ 256 characters). */
const HEADER_MAX = 4096;
/** What ends the header: the roots' key and the array's `[`. */
const ROOTS_KEY = ',"roots":[';
/** Lines shorter than this are parsed whole: comparing saves nothing there. */
export const REUSE_MIN_BYTES = 64 * 1024;
/** Bytes compared at a time while looking for the first and last difference. */
const BLOCK = 64 * 1024;

const COMMA = 0x2c;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** One server's last line: its bytes, its roots, and where each root's JSON lies. */
interface Kept {
  line: Buffer;
  /** Offset of the roots array's `[` in `line`. */
  open: number;
  roots: Root[];
  /** Each root's first byte and the byte after its last, relative to `open`; found when first needed. */
  bounds?: { starts: Int32Array; ends: Int32Array } | null;
}

/** Where the roots array's `[` is in a `list_changed` line of the daemon's shape, or -1. */
function rootsOpen(line: Buffer): number {
  if (line.length < HEAD.length + 8 || line.compare(HEAD, 0, HEAD.length, 0, HEAD.length) !== 0)
    return -1;
  const end = Math.min(line.length, HEAD.length + HEADER_MAX);
  const m = HEADER.exec(line.toString('latin1', HEAD.length, end));
  if (m === null) return -1;
  const open = HEAD.length + m[0].length - 1;
  // Read as Latin-1 above: only a header all in ASCII reads the same as UTF-8.
  return isAscii(line.subarray(HEAD.length, open)) ? open : -1;
}

/** Whether the line ends with the roots array closing, then params and the message: `]}}`. */
function endsAsList(line: Buffer): boolean {
  const n = line.length;
  return n >= 3 && line[n - 3] === 0x5d && line[n - 2] === 0x7d && line[n - 1] === 0x7d;
}

/**
 * The roots of an array's elements between `from` and `to` (relative to `base`), found by their
 * commas outside strings; undefined for anything but `value,value,…` without whitespace or
 * nesting surprises (the caller then parses in full).
 */
function elementBounds(
  bytes: Buffer,
  from: number,
  to: number,
  base: number,
): { starts: number[]; ends: number[] } | undefined {
  const starts: number[] = [];
  const ends: number[] = [];
  if (from === to) return { starts, ends };
  let depth = 0;
  let start = from;
  for (let i = from; i < to; i++) {
    const c = bytes[i]!;
    if (c === QUOTE) {
      // To the closing quote: a backslash takes the next byte with it.
      for (i++; i < to; i++) {
        const d = bytes[i]!;
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
      if (i >= to) return undefined;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) {
      if (--depth < 0) return undefined;
    } else if (c === COMMA && depth === 0) {
      if (i === start) return undefined;
      starts.push(start - base);
      ends.push(i - base);
      start = i + 1;
    } else if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) return undefined;
  }
  if (depth !== 0 || start === to) return undefined;
  starts.push(start - base);
  ends.push(to - base);
  return { starts, ends };
}

/** Length of the common prefix of `a[aFrom…]` and `b[bFrom…]`, at most `max`. */
function commonPrefix(a: Buffer, aFrom: number, b: Buffer, bFrom: number, max: number): number {
  let n = 0;
  while (n < max) {
    const k = Math.min(BLOCK, max - n);
    if (a.compare(b, bFrom + n, bFrom + n + k, aFrom + n, aFrom + n + k) === 0) n += k;
    else {
      while (a[aFrom + n] === b[bFrom + n]) n++;
      return n;
    }
  }
  return n;
}

/** Length of the common suffix of `a[…aEnd)` and `b[…bEnd)`, at most `max`. */
function commonSuffix(a: Buffer, aEnd: number, b: Buffer, bEnd: number, max: number): number {
  let n = 0;
  while (n < max) {
    const k = Math.min(BLOCK, max - n);
    if (a.compare(b, bEnd - n - k, bEnd - n, aEnd - n - k, aEnd - n) === 0) n += k;
    else {
      while (a[aEnd - n - 1] === b[bEnd - n - 1]) n++;
      return n;
    }
  }
  return n;
}

/** The first index whose value is at least `x` in an ascending array (its length if none). */
function lowerBound(values: Int32Array, x: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function text(bytes: Buffer, from: number, to: number): string {
  const part = bytes.subarray(from, to);
  return isAscii(part) ? part.toString('latin1') : part.toString('utf8');
}

/** Reads `list_changed` lines by their difference from the last one per server. */
export class ListReuse {
  private readonly kept = new Map<string, Kept>();

  /**
   * The params of `line` (one whole line, without its newline) if it is a `list_changed` that
   * can be read from the last one kept for its server; undefined otherwise (parse it in full,
   * then `keep` it). What is returned is exactly what `JSON.parse` gives for the params.
   */
  take(line: Buffer): ListChangedParams | undefined {
    if (line.length < REUSE_MIN_BYTES) return undefined;
    const open = rootsOpen(line);
    if (open < 0 || !endsAsList(line)) return undefined;
    // `"server":…,"revision":…,"instance":…` as the header regex admitted it (ASCII).
    const header = JSON.parse(
      `{"server":${line.toString('latin1', HEAD.length, open - ROOTS_KEY.length + 1)}}`,
    ) as Omit<ListChangedParams, 'roots'>;
    const kept = this.kept.get(header.server);
    if (kept === undefined) return undefined;
    const bounds = this.boundsOf(kept);
    if (bounds === undefined) return undefined;
    const old = kept.line;
    // Both arrays from `[` to the end of the line, `]}}` included.
    const oldLength = old.length - kept.open;
    const newLength = line.length - open;
    const shorter = Math.min(oldLength, newLength);
    const p = commonPrefix(old, kept.open, line, open, shorter);
    const s = commonSuffix(old, old.length, line, line.length, shorter - p);
    if (s < 3) return undefined;
    const { starts, ends } = bounds;
    const count = kept.roots.length;
    // Roots wholly inside the equal leading bytes, the byte after each too (a number ends there).
    const a = lowerBound(ends, p);
    // Roots wholly inside the equal trailing bytes, the comma before each too.
    const b = Math.max(a, lowerBound(starts, oldLength - s + 1));
    const shift = newLength - oldLength;
    // The new bytes between the last leading root (or `[`) and the first trailing one (or `]`):
    // `,` when nothing came between, else the new roots with a comma before (after a leading
    // root) and after (before a trailing one).
    const midStart = open + (a === 0 ? 1 : ends[a - 1]!);
    const midEnd = open + (b === count ? newLength - 3 : starts[b]! + shift);
    if (midEnd < midStart) return undefined;
    let from = midStart;
    let to = midEnd;
    if (a > 0 && from < to) {
      if (line[from] !== COMMA) return undefined;
      from++;
    }
    if (b < count && from < to) {
      if (line[to - 1] !== COMMA) return undefined;
      to--;
    }
    let middle: Root[] = [];
    let middleBounds: { starts: number[]; ends: number[] } = { starts: [], ends: [] };
    if (from === to) {
      if (midEnd - midStart !== (a > 0 && b < count ? 1 : 0)) return undefined;
    } else {
      const found = elementBounds(line, from, to, open);
      if (found === undefined) return undefined;
      try {
        middle = JSON.parse(`[${text(line, from, to)}]`) as Root[];
      } catch {
        return undefined;
      }
      if (middle.length !== found.starts.length) return undefined;
      middleBounds = found;
    }
    const roots = kept.roots.slice(0, a).concat(middle, kept.roots.slice(b));
    const newStarts = new Int32Array(roots.length);
    const newEnds = new Int32Array(roots.length);
    newStarts.set(starts.subarray(0, a));
    newEnds.set(ends.subarray(0, a));
    newStarts.set(middleBounds.starts, a);
    newEnds.set(middleBounds.ends, a);
    for (let i = b, j = a + middle.length; i < count; i++, j++) {
      newStarts[j] = starts[i]! + shift;
      newEnds[j] = ends[i]! + shift;
    }
    this.kept.set(header.server, {
      line,
      open,
      roots,
      bounds: { starts: newStarts, ends: newEnds },
    });
    return { ...header, roots };
  }

  /** Remember a `list_changed` line parsed in full, to read the next one for its server by. */
  keep(line: Buffer, params: ListChangedParams): void {
    if (line.length < REUSE_MIN_BYTES) {
      this.kept.delete(params.server);
      return;
    }
    const open = rootsOpen(line);
    if (open < 0 || !endsAsList(line)) {
      this.kept.delete(params.server);
      return;
    }
    const kept: Kept = { line, open, roots: params.roots };
    this.kept.set(params.server, kept);
    // Where each root lies is needed by the next push: found now, between pushes.
    setImmediate(() => this.boundsOf(kept)).unref();
  }

  /** Forget every kept line (the connection closed). */
  clear(): void {
    this.kept.clear();
  }

  private boundsOf(kept: Kept): { starts: Int32Array; ends: Int32Array } | undefined {
    if (kept.bounds !== undefined) return kept.bounds ?? undefined;
    const found = elementBounds(kept.line, kept.open + 1, kept.line.length - 3, kept.open);
    if (found === undefined || found.starts.length !== kept.roots.length) {
      kept.bounds = null;
      return undefined;
    }
    kept.bounds = { starts: Int32Array.from(found.starts), ends: Int32Array.from(found.ends) };
    return kept.bounds;
  }
}
