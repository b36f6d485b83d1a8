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

/**
 * The root holding `canonical` (normalized, absolute) nearest to it: the longest root that is
 * the path or one of its ancestors, by whole segments.
 */
export function holdingRoot(info: RootInfo[], canonical: string): RootInfo | undefined {
  for (const p of selfAndAncestors(canonical)) {
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
