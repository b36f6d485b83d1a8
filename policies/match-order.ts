/**
 * An entry's matches in the order of the paths their roots name (UTF-8 order, the list's own),
 * made once per match list and kept beside it: every view that holds the entry, and every entry
 * that shares the expansion, merges the same ordered list instead of sorting its own copy.
 */
import { compareUtf8, listedPath } from './paths.js';

/** A match as an entry holds it: the canonical path its root names. */
interface Match {
  canonical: string;
}

/** One match list in order, with the path each match's root names. */
export interface OrderedMatches<M extends Match = Match> {
  /** How long the list was when ordered (a guard: lists are not changed once held). */
  size: number;
  /** The matches in UTF-8 order of their keys, equal keys in their order in the list. */
  matches: readonly M[];
  /** The path each match's root names (`listedPath`), when any differs from its `canonical`. */
  keys: readonly string[] | undefined;
  /** Whether a key holds a surrogate: UTF-16 order then differs from UTF-8 order. */
  surrogates: boolean;
}

/** UTF-16 code units that order differently from the code points (UTF-8 bytes) they encode. */
const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Keyed by the list itself: a match list is never changed once an entry holds it (an expansion's
 * update makes new lists), so the order made for it holds for as long as the list lives.
 */
const ordered = new WeakMap<readonly Match[], OrderedMatches>();

/** `list` in the order of the paths its roots name (see `OrderedMatches`). */
export function orderedMatches<M extends Match>(list: readonly M[]): OrderedMatches<M> {
  let o = ordered.get(list) as OrderedMatches<M> | undefined;
  if (o === undefined || o.size !== list.length) {
    o = order(list);
    ordered.set(list, o);
  }
  return o;
}

/** The key of match `i` of `o`. */
export function keyAt(o: OrderedMatches, i: number): string {
  return o.keys === undefined ? o.matches[i]!.canonical : o.keys[i]!;
}

function order<M extends Match>(list: readonly M[]): OrderedMatches<M> {
  let keys: string[] | undefined;
  let surrogates = false;
  let sorted = true;
  for (let i = 0; i < list.length; i++) {
    const canonical = list[i]!.canonical;
    const key = listedPath(canonical);
    if (key !== canonical && keys === undefined) keys = list.slice(0, i).map((m) => m.canonical);
    keys?.push(key);
    if (!surrogates && SURROGATE.test(key)) surrogates = true;
    if (i > 0 && sorted && !(keyOf(list, keys, i - 1) <= key)) sorted = false;
  }
  if (sorted && !surrogates) return { size: list.length, matches: list, keys, surrogates };
  const idx = Array.from(list, (_, i) => i);
  const k = (i: number) => keyOf(list, keys, i);
  if (surrogates) idx.sort((x, y) => compareUtf8(k(x), k(y)) || x - y);
  else idx.sort((x, y) => (k(x) < k(y) ? -1 : k(x) > k(y) ? 1 : x - y));
  return {
    size: list.length,
    matches: idx.map((i) => list[i]!),
    keys: keys === undefined ? undefined : idx.map((i) => keys[i]!),
    surrogates,
  };
}

function keyOf(list: readonly Match[], keys: string[] | undefined, i: number): string {
  return keys === undefined ? list[i]!.canonical : keys[i]!;
}

/**
 * Ordered match lists merged into one order, path by path: `next` moves to the next path and
 * gives every match naming it, lists in their given order (entry order), each list's own in its
 * order. A heap of the lists by their next key, so that a view of 30,000 entries of one match
 * each costs n log n, not n² (a scan of every list per path).
 */
export class MatchMerge<M extends Match> {
  /** The path `next` moved to. */
  key = '';
  /** How many matches name it: the first `count` of `from` and `matches`. */
  count = 0;
  /** The index of the list each match came from. */
  readonly from: number[] = [];
  readonly matches: M[] = [];
  private readonly at: number[];
  /** List indexes, the least (next key, index) first. */
  private readonly heap: number[] = [];
  private readonly before: (a: string, b: string) => boolean;

  constructor(
    private readonly lists: readonly OrderedMatches<M>[],
    /** Whether any key holds a surrogate: compare as UTF-8 then, not as UTF-16. */
    surrogates: boolean,
  ) {
    this.before = surrogates ? (a, b) => compareUtf8(a, b) < 0 : (a, b) => a < b;
    this.at = new Array<number>(lists.length).fill(0);
    for (let j = 0; j < lists.length; j++) if (lists[j]!.size > 0) this.heap.push(j);
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  /** Move to the next path; false when every list is done. */
  next(): boolean {
    const heap = this.heap;
    if (heap.length === 0) return false;
    const j = heap[0]!;
    const list = this.lists[j]!;
    const i = this.at[j]!;
    const key = keyAt(list, i);
    this.key = key;
    // Nearly every path: named once, by the first list, and by no other (the heap's least
    // other key is at one of the first's two children).
    if (
      !(i + 1 < list.size && keyAt(list, i + 1) === key) &&
      !(heap.length > 1 && this.headKey(heap[1]!) === key) &&
      !(heap.length > 2 && this.headKey(heap[2]!) === key)
    ) {
      this.count = 1;
      this.from[0] = j;
      this.matches[0] = list.matches[i]!;
      this.advanced(j, i + 1);
      return true;
    }
    // A path named more than once: the lists holding it leave the heap least index first.
    let n = 0;
    const done: number[] = [];
    while (heap.length > 0 && this.headKey(heap[0]!) === key) {
      const l = heap[0]!;
      const ls = this.lists[l]!;
      let k = this.at[l]!;
      for (; k < ls.size && keyAt(ls, k) === key; k++, n++) {
        this.from[n] = l;
        this.matches[n] = ls.matches[k]!;
      }
      this.at[l] = k;
      this.removeFirst();
      done.push(l);
    }
    this.count = n;
    for (const l of done) if (this.at[l]! < this.lists[l]!.size) this.insert(l);
    return true;
  }

  private headKey(j: number): string {
    return keyAt(this.lists[j]!, this.at[j]!);
  }

  /** Whether list `a` comes before list `b`: its next key first, the lower index among equals. */
  private less(a: number, b: number): boolean {
    const ka = this.headKey(a);
    const kb = this.headKey(b);
    return ka === kb ? a < b : this.before(ka, kb);
  }

  /** The first list, moved on to its match `i`. */
  private advanced(j: number, i: number): void {
    this.at[j] = i;
    if (i < this.lists[j]!.size) this.siftDown(0);
    else this.removeFirst();
  }

  private removeFirst(): void {
    const last = this.heap.pop()!;
    if (this.heap.length === 0) return;
    this.heap[0] = last;
    this.siftDown(0);
  }

  private insert(j: number): void {
    const heap = this.heap;
    let i = heap.length;
    heap.push(j);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(j, heap[parent]!)) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = j;
  }

  private siftDown(i: number): void {
    const heap = this.heap;
    const j = heap[i]!;
    for (;;) {
      let c = 2 * i + 1;
      if (c >= heap.length) break;
      if (c + 1 < heap.length && this.less(heap[c + 1]!, heap[c]!)) c++;
      if (!this.less(heap[c]!, j)) break;
      heap[i] = heap[c]!;
      i = c;
    }
    heap[i] = j;
  }
}
