/**
 * What the daemon must watch to see a policy change, computed by the engine once: the resolution
 * puts these directories in its watch plan and the daemon's watcher plans its watches with the
 * same functions, so the two never disagree.
 */
import { dirname } from 'node:path';
import { globMatcher } from '../common/glob-dialect.js';
import { groupHoldsSlash } from '../common/glob-groups.js';
import { GLOB_OPTIONS, isGlob, splitGlob } from './expand.js';
import type { FsView } from './model.js';

/** The closest directory at or above `path` that exists (a path not yet created is watched from there). */
export async function nearestExisting(fs: FsView, path: string): Promise<string> {
  let cur = path;
  for (;;) {
    try {
      if ((await fs.stat(cur)).isDirectory()) return cur;
    } catch {
      // not there (yet): climb
    }
    const up = dirname(cur);
    if (up === cur) return cur;
    cur = up;
  }
}

/**
 * Whether a directory at `names` below a depth-limited watch's directory (one name per level)
 * could hold a match of one of `globs` (relative to that directory), or lie on the way to one:
 * each name matches its segment and a segment is left below it. A glob whose groups hold a
 * slash, or with `**`, could lie anywhere (its watch is not narrowed).
 */
export function entersBelow(globs: readonly string[]): (names: readonly string[]) => boolean {
  const shapes = globs.map((g) =>
    groupHoldsSlash(g) || g.includes('**')
      ? undefined
      : g
          .split('/')
          .filter((s) => s !== '')
          .map((s) => globMatcher(s, GLOB_OPTIONS)),
  );
  return (names) =>
    shapes.some(
      (segs) =>
        segs === undefined || (names.length < segs.length && names.every((n, i) => segs[i]!(n))),
    );
}

/** The static directory an include glob's matches live under (`/etc/mcp/*.yaml` → `/etc/mcp`). */
export function includeBase(pattern: string): string {
  return splitGlob(pattern).base;
}

/** The directory to watch for an include glob: its base, or the closest ancestor that exists. */
export function includeWatchDir(fs: FsView, pattern: string): Promise<string> {
  return nearestExisting(fs, includeBase(pattern));
}

/**
 * How deep below its base an include glob's matches may lie: the levels of directories its glob
 * part spans (`dir-glob/p.yaml`: 1), or 'recursive' for `**` (and a brace that may hold a `/`).
 * A watch of the base alone never sees a file made in a directory below it.
 */
export function includeDepth(pattern: string): number | 'recursive' {
  const { glob } = splitGlob(pattern);
  if (glob.includes('**') || groupHoldsSlash(glob)) return 'recursive';
  return glob.split('/').length - 1;
}

/** A test for paths the include globs among `patterns` could load. */
export function includeMatcher(patterns: string[]): (path: string) => boolean {
  const globs = patterns.filter(isGlob).map((p) => globMatcher(p, GLOB_OPTIONS));
  return (path) => globs.some((m) => m(path));
}
