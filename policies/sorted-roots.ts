/**
 * Lookups in a view's roots, which are kept sorted by canonical path in UTF-8 order
 * (server-view.ts, view-update.ts): by binary search, so that an access decision against a view
 * of 100,000 roots costs a few comparisons per segment of the path, not a pass over every root.
 */
import { compareUtf8, selfAndAncestors } from './paths.js';
import type { RootInfo } from './server-view.js';

/** The first place in the sorted `info` whose path is not below `canonical` in UTF-8 order. */
export function insertionPoint(info: RootInfo[], canonical: string): number {
  let lo = 0;
  let hi = info.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareUtf8(info[mid]!.canonical, canonical) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Where `canonical` is in the sorted `info`, or -1. */
export function indexOf(info: RootInfo[], canonical: string): number {
  const at = insertionPoint(info, canonical);
  return at < info.length && info[at]!.canonical === canonical ? at : -1;
}

/** Segments of a canonical path: `/` has none, `/a/b` two. */
function segmentCount(canonical: string): number {
  let n = 0;
  for (let i = canonical.indexOf('/'); i >= 0; i = canonical.indexOf('/', i + 1)) n++;
  return canonical === '/' ? 0 : n;
}

/** The most segments of any root in a view's `info` (which is never changed once made). */
const deepest = new WeakMap<RootInfo[], number>();

function deepestRoot(info: RootInfo[]): number {
  let d = deepest.get(info);
  if (d === undefined) {
    d = 0;
    for (const r of info) d = Math.max(d, segmentCount(r.canonical));
    deepest.set(info, d);
  }
  return d;
}

/** `canonical` cut to its first `segments` segments (itself when it has no more). */
function cutTo(canonical: string, segments: number): string {
  let at = 0;
  for (let n = 0; n <= segments; n++) {
    at = canonical.indexOf('/', at + 1);
    if (at < 0) return canonical;
  }
  return canonical.slice(0, at);
}

/**
 * The root holding `canonical` (normalized, absolute) nearest to it: the longest root that is
 * the path or one of its ancestors, by whole segments. Only ancestors no deeper than the deepest
 * root are looked up: a path thousands of segments long (an agent's argument) below a root a few
 * segments deep costs those few lookups, not one per segment.
 */
export function holdingRoot(info: RootInfo[], canonical: string): RootInfo | undefined {
  for (const p of selfAndAncestors(cutTo(canonical, deepestRoot(info)))) {
    const at = indexOf(info, p);
    if (at >= 0) return info[at];
  }
  return undefined;
}

/**
 * A read-only root strictly inside `canonical`, if there is one. Every path strictly inside it
 * starts with it and a `/`, and all such paths are next to each other in the sorted list.
 */
export function readOnlyInside(info: RootInfo[], canonical: string): RootInfo | undefined {
  const prefix = canonical.endsWith('/') ? canonical : `${canonical}/`;
  for (let i = insertionPoint(info, prefix); i < info.length; i++) {
    const r = info[i]!;
    if (!r.canonical.startsWith(prefix)) return undefined;
    if (r.readOnly && r.canonical !== canonical) return r;
  }
  return undefined;
}
