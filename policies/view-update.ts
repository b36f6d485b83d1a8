/**
 * A server's view brought up to date from the view of the resolution before, by the matches its
 * entries added and removed (entry.ts `MatchDelta`), in time proportional to the change: a path
 * named by no match before gets its root, a path whose every match went loses it, and the sorted
 * list takes them in place. Whatever the delta cannot decide alone (a path some other match still
 * names, denies that are no longer the same, an entry expanded afresh) declines, and the caller
 * builds the view whole. The result is the one `computeView` gives.
 */
import type { Root } from '../common/types.js';
import type { EntryResult } from './entry.js';
import type { DenyRule } from './deny.js';
import { compareUtf8, listedPath } from './paths.js';
import { runAtOnce, SLICE } from './slices.js';
import { indexOf, insertionPoint } from './sorted-roots.js';
import {
  fold,
  nextExpiryOf,
  expiredOf,
  rootOf,
  type Agg,
  type Block,
  type RootInfo,
  type ServerView,
  type ViewDenies,
} from './server-view.js';

/** Past this many changed paths, building the view whole (in slices) is the better deal. */
const MAX_CHANGED = 4096;

/**
 * The view of `blocks` from `before`, the view of `earlier` (the same server blocks in the
 * resolution before), or undefined when only a full build can tell.
 */
export function updateView(
  before: ServerView,
  earlier: Block[],
  blocks: Block[],
  d: ViewDenies,
): ServerView | undefined {
  return runAtOnce(updateViewSteps(before, earlier, blocks, d));
}

/**
 * `updateView` as steps: the decisions take time proportional to the change; the new view's
 * lists are new arrays (the view in force keeps answering from its own until the new one takes
 * over), each made once at its size and filled in one pass that yields every `SLICE` roots.
 */
export function* updateViewSteps(
  before: ServerView,
  earlier: Block[],
  blocks: Block[],
  d: ViewDenies,
): Generator<void, ServerView | undefined> {
  const changes = entryChanges(earlier, blocks);
  if (changes === undefined) return undefined;
  const own = blocks.flatMap((b) => b.denies);
  const denies = [...d.globalDenies, ...own, ...d.protectedList];
  if (!sameDenies(denies, before.denies)) return undefined;

  // Per path: the matches added (in entry order, as a full build folds them) and how many went.
  const added = new Map<string, { e: EntryResult; name: string }[]>();
  const removed = new Map<string, number>();
  for (const { e, delta } of changes) {
    for (const m of delta.removed) {
      const c = listedPath(m.canonical);
      removed.set(c, (removed.get(c) ?? 0) + 1);
    }
    for (const m of delta.added) {
      const c = listedPath(m.canonical);
      const list = added.get(c);
      if (list) list.push({ e, name: m.name });
      else added.set(c, [{ e, name: m.name }]);
    }
  }
  if (added.size + removed.size > MAX_CHANGED) return undefined;
  const info = before.info;
  // The explanation tells a view's denies apart by identity: this resolution's rule objects.
  const same = new Map(before.denies.map((r, i) => [r, denies[i]!]));
  const dropped = new Map<string, DenyRule>();
  for (const [c, r] of before.dropped) {
    const now = same.get(r);
    if (now === undefined) return undefined;
    dropped.set(c, now);
  }
  const counts = new Map<string, number>();
  for (const [c, n] of before.counts) {
    counts.set(c, n);
    if (counts.size % SLICE === 0) yield;
  }
  const inserts: RootInfo[] = [];
  const gone: RootInfo[] = [];
  for (const c of new Set([...added.keys(), ...removed.keys()])) {
    const at = indexOf(info, c);
    const listed = at >= 0;
    const had = listed || dropped.has(c) ? (counts.get(c) ?? 1) : 0;
    const ins = added.get(c) ?? [];
    const out = removed.get(c) ?? 0;
    if (had === 0 && out === 0) {
      // Named by nothing before: its root is what the added matches alone give it.
      let a: Agg | undefined;
      for (const { e, name } of ins) a = fold(a, e, name);
      if (a!.n > 1) counts.set(c, a!.n);
      const r = rootOf(c, a!, own, d);
      if ('kill' in r) dropped.set(c, r.kill);
      else inserts.push(r);
    } else if (ins.length === 0 && out === had) {
      // Every match that named it went.
      counts.delete(c);
      if (listed) gone.push(info[at]!);
      else dropped.delete(c);
    } else {
      return undefined;
    }
  }
  inserts.sort((x, y) => compareUtf8(x.canonical, y.canonical));
  const at = inserts.map((r) => insertionPoint(info, r.canonical));
  const out = gone.map((r) => indexOf(info, r.canonical)).sort((x, y) => x - y);
  const { kept, roots } = yield* merged(before, inserts, at, out);
  const change = {
    from: before.roots,
    added: inserts.map((i) => i.root.uri),
    removed: gone.map((i) => i.root.uri),
  };
  return {
    roots,
    info: kept,
    denies,
    dropped,
    nextExpiry: nextExpiryOf(blocks),
    expired: expiredOf(blocks),
    counts,
    change,
  };
}

/**
 * The entries that changed since the resolution before, with what they added and removed; or
 * undefined when an entry changed in a way no delta describes (expanded afresh, expired).
 */
function entryChanges(
  earlier: Block[],
  blocks: Block[],
): { e: EntryResult; delta: NonNullable<EntryResult['delta']> }[] | undefined {
  if (earlier.length !== blocks.length) return undefined;
  const out: { e: EntryResult; delta: NonNullable<EntryResult['delta']> }[] = [];
  for (let i = 0; i < blocks.length; i++) {
    const was = earlier[i]!.entries;
    const now = blocks[i]!.entries;
    if (earlier[i]!.block !== blocks[i]!.block || was.length !== now.length) return undefined;
    for (let j = 0; j < now.length; j++) {
      const p = was[j]!;
      const n = now[j]!;
      if (p.entry !== n.entry || p.expired !== n.expired || p.readOnly !== n.readOnly)
        return undefined;
      if (n.expired || n.from === p.from) continue;
      if (n.delta === undefined || p.from === undefined || n.delta.fromId !== p.from.id)
        return undefined;
      out.push({ e: n, delta: n.delta });
    }
  }
  return out;
}

/**
 * The earlier roots without those that went (`out`, ascending indexes), the new ones put in
 * where a binary search put them (`at`, ascending indexes into the earlier list): no path is
 * compared on the way. Each list is one array made at its final size and filled a slice at a
 * time (slices.ts: a list this long is a large object, paid for page by page when made, and
 * an array grown by pushes is copied at every growth).
 */
function* merged(
  before: ServerView,
  inserts: RootInfo[],
  at: number[],
  out: number[],
): Generator<void, { kept: RootInfo[]; roots: Root[] }> {
  const info = before.info;
  const n = info.length - out.length + inserts.length;
  // Each made in a turn of its own: making one is the page faults of all of it at once.
  const kept = new Array<RootInfo>(n);
  yield;
  const roots = new Array<Root>(n);
  let w = 0;
  let next = 0;
  let k = 0;
  for (let i = 0; i <= info.length; i++) {
    if (i > 0 && i % SLICE === 0) yield;
    for (; next < inserts.length && at[next] === i; next++) {
      kept[w] = inserts[next]!;
      roots[w++] = inserts[next]!.root;
    }
    if (i === info.length) break;
    if (k < out.length && out[k] === i) {
      k++;
      continue;
    }
    kept[w] = info[i]!;
    roots[w++] = before.roots[i]!;
  }
  return { kept, roots };
}

/**
 * Whether two views' deny lists say the same, rule by rule (what `denySignature` compares as
 * text): no string of every rule is made per server on every recompute.
 */
function sameDenies(a: DenyRule[], b: DenyRule[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (
      x !== y &&
      (x.source !== y.source ||
        x.access !== y.access ||
        x.display !== y.display ||
        x.literal !== y.literal ||
        x.pattern !== y.pattern ||
        x.base !== y.base ||
        x.entriesOnly !== y.entriesOnly ||
        x.inMeta !== y.inMeta)
    )
      return false;
  }
  return true;
}
