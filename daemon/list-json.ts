/**
 * A roots list as the UTF-8 bytes of the JSON the daemon sends, made from runs of roots encoded
 * before. Lists that follow each other share most root objects (a snapshot updated by a delta
 * keeps every root it did not add), so a list is cut into runs at roots chosen by their URI alone:
 * a root added or removed changes the run it falls in, and every other run is found again by its
 * first root and reused as it was. A 100,000-root list after one new directory encodes one run,
 * not 100,000 roots, and a push or an answer is those runs' bytes put together: no string of the
 * whole list is built or encoded (that took tens of ms in one turn of the event loop). The bytes
 * are those of `JSON.stringify(roots)`; root objects are never changed once made, which is what
 * makes a run found by its members' identity still exact.
 */
import type { Root } from '../common/types.js';

/** About one root in 2^(32 - RUN_SHIFT) = 64 ends a run; no run is longer than MAX_RUN. */
const RUN_SHIFT = 26;
const MAX_RUN = 1024;

const OPEN = Buffer.from('[');
const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']');
const EMPTY: readonly Buffer[] = [Buffer.from('[]')];

interface Run {
  roots: Root[];
  /** The run's roots as JSON, separated by commas, without brackets. */
  bytes: Buffer;
}

export class ListJson {
  /** Each run by its first root (runs go when their roots do). */
  private readonly runs = new WeakMap<Root, Run>();
  /** Each list's pieces. */
  private readonly lists = new WeakMap<Root[], readonly Buffer[]>();

  /**
   * The JSON of `roots` as pieces to be sent one after another (or joined with `Buffer.concat`):
   * `[`, the runs with commas between them, `]`. Made once per list; the pieces are shared and
   * must not be written to.
   */
  parts(roots: Root[]): readonly Buffer[] {
    let parts = this.lists.get(roots);
    if (parts !== undefined) return parts;
    if (roots.length === 0) parts = EMPTY;
    else {
      const built: Buffer[] = [OPEN];
      let i = 0;
      while (i < roots.length) {
        const run = this.runAt(roots, i);
        if (i > 0) built.push(COMMA);
        built.push(run.bytes);
        i += run.roots.length;
      }
      built.push(CLOSE);
      parts = built;
    }
    this.lists.set(roots, parts);
    return parts;
  }

  /** The JSON text of `roots` (decoded from the pieces: for comparisons and tests, not for sending). */
  of(roots: Root[]): string {
    return Buffer.concat(this.parts(roots)).toString('utf8');
  }

  /**
   * Whether two lists' JSON is the same, byte for byte. Pieces shared by both, at the same place,
   * are not compared; the rest is compared where it lies, without joining either list (joining
   * two 3 MB lists copies 6 MB to learn that one run of them differs).
   */
  same(a: Root[], b: Root[]): boolean {
    return sameBytes(this.parts(a), this.parts(b));
  }

  /** The run starting at `roots[i]`: the one kept, if it is still whole there, else a new one. */
  private runAt(roots: Root[], i: number): Run {
    const kept = this.runs.get(roots[i]!);
    if (kept !== undefined && i + kept.roots.length <= roots.length) {
      let same = true;
      for (let k = 1; k < kept.roots.length && same; k++) same = kept.roots[k] === roots[i + k];
      if (same) return kept;
    }
    let end = i + 1;
    while (end < roots.length && end - i < MAX_RUN && !endsRun(roots[end - 1]!)) end++;
    const members = roots.slice(i, end);
    // One call for the run: the array's JSON is its members' JSON joined by commas, in brackets
    // (a root is an object, never undefined or a function, so none turns into `null`). A call
    // per root and the concatenations took a fifth more for a 100,000-root list.
    const text = JSON.stringify(members);
    // JSON.stringify escapes lone surrogates, so the text encodes to UTF-8 without loss.
    const run = { roots: members, bytes: Buffer.from(text.slice(1, -1), 'utf8') };
    this.runs.set(roots[i]!, run);
    return run;
  }
}

/** Whether two lists of pieces hold the same bytes, however each is cut into pieces. */
export function sameBytes(pa: readonly Buffer[], pb: readonly Buffer[]): boolean {
  if (pa === pb) return true;
  if (byteLength(pa) !== byteLength(pb)) return false;
  let i = 0;
  let j = 0;
  let atA = 0; // bytes of pa[i] already compared
  let atB = 0;
  while (i < pa.length && j < pb.length) {
    const x = pa[i]!;
    const y = pb[j]!;
    if (atA === 0 && atB === 0 && x === y) {
      i++;
      j++;
      continue;
    }
    const n = Math.min(x.length - atA, y.length - atB);
    if (x.compare(y, atB, atB + n, atA, atA + n) !== 0) return false;
    atA += n;
    atB += n;
    if (atA === x.length) [i, atA] = [i + 1, 0];
    if (atB === y.length) [j, atB] = [j + 1, 0];
  }
  return true; // equal lengths: both ran out together
}

function byteLength(parts: readonly Buffer[]): number {
  let n = 0;
  for (const p of parts) n += p.length;
  return n;
}

/** Whether a run ends after this root: a hash of its URI's last characters, so lists realign. */
function endsRun(root: Root): boolean {
  const uri = root.uri;
  let h = uri.length;
  for (let k = Math.max(0, uri.length - 12); k < uri.length; k++)
    h = (Math.imul(h, 31) + uri.charCodeAt(k)) | 0;
  // The top bits of a multiplicative hash: one root in 2^(32-26) = 64.
  return Math.imul(h, 0x9e3779b1) >>> RUN_SHIFT === 0;
}
