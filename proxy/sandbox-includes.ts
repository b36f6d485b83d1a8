/**
 * Include patterns in a sandboxed server's writable roots (`_meta['mcp-roots/include']`). A file an
 * include pattern matches is policy the moment it exists, and the daemon loads it at once: a
 * server that can create one grants itself any root, and a restart after the fact does not undo
 * it. So no writable mount may let the server create or change anything such a pattern could
 * match, nor the directories on the way to it:
 *
 * - the pattern's literal base (the directory before its first glob character; for a plain path,
 *   the path) lies in a writable root and exists: it is mounted read-only, and its ancestors are
 *   pinned (a renamed parent would carry the mount away and free the name);
 * - it lies in a writable root and does not exist: nothing can be made read-only, and the server
 *   could make it: the sandbox is not laid out (an error that says what to do);
 * - a writable root lies strictly inside the base and the pattern could match below it: the same;
 * - the way to the base as written goes through a symlink inside a writable root: the daemon
 *   follows that name at every load, and a bind mount cannot hold a link (it follows it), so the
 *   server could point it at a directory of its own: the same (the daemon also sends the pattern
 *   as written when links make it differ, policies/include-meta.ts).
 */
import { lstat, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { DENY_GLOB, GLOB_CHARACTERS, globMatcher, scanGlob } from '../common/glob-dialect.js';
import { groupHoldsSlash } from '../common/glob-groups.js';
import { linksOnTheWay } from '../common/links-on-the-way.js';
import { ancestors, inside } from './sandbox-paths.js';

/** One include pattern split where its glob starts. */
export interface IncludeSplit {
  pattern: string;
  /** The literal directory before the first glob segment, or the whole path when there is none. */
  base: string;
  /** What follows the base ('' for a plain path). */
  glob: string;
}

/** Where an include pattern's glob starts, as the daemon splits it (policies/expand.ts `splitGlob`). */
export function splitInclude(pattern: string): IncludeSplit {
  const scan = GLOB_CHARACTERS.test(pattern) ? scanGlob(pattern) : undefined;
  if (scan === undefined || !scan.isGlob) return { pattern, base: pattern, glob: '' };
  return { pattern, base: scan.base === '' ? '/' : scan.base, glob: scan.glob };
}

/**
 * Whether some path below `rel` (relative to the pattern's base, non-empty) could match `glob`.
 * Segment by segment: `**` may stand for anything; a group or class that holds a slash cannot be
 * split by segment and counts as could (fail closed).
 */
export function couldMatchBelow(glob: string, rel: string): boolean {
  if (groupHoldsSlash(glob)) return true;
  const parts = glob.split('/');
  const names = rel.split('/');
  for (let i = 0; i < names.length; i++) {
    const part = parts[i];
    if (part === undefined) return false; // the pattern ends above: nothing below rel matches
    if (part.includes('**')) return true;
    if (!globMatcher(part, DENY_GLOB)(names[i]!)) return false;
  }
  return parts.length > names.length;
}

/** `p` with its existing part resolved (links, `..`), the rest as written. */
export async function canonicalLoose(p: string): Promise<string> {
  const missing: string[] = [];
  for (let at = p; ; at = dirname(at)) {
    try {
      return join(await realpath(at), ...missing.reverse());
    } catch {
      if (at === dirname(at)) return p;
      missing.push(basename(at));
    }
  }
}

async function exists(p: string): Promise<boolean> {
  try {
    await lstat(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * The first symlink inside `root` on the way to `path` (common/links-on-the-way.ts), or undefined.
 */
export async function linkInside(path: string, root: string): Promise<string | undefined> {
  return (await linksOnTheWay(path, { lstat, readlink })).find((l) => inside(l, root));
}

/** An include base to keep read-only, with the writable root it lies in. */
export interface HeldBase {
  base: string;
  root: string;
}

/**
 * What the include patterns of one writable root need, or why the root cannot be sandboxed. An
 * extra writable path (`sandbox.write`, `kind: 'write'`) is writable as a root is, and held alike.
 */
export async function includeHolds(
  root: string,
  patterns: readonly string[],
  kind: 'root' | 'write' = 'root',
): Promise<{ readOnly: string[]; pinned: string[]; held: HeldBase[] }> {
  const where =
    kind === 'root'
      ? `writable root ${root}`
      : `writable path ${root} (the policy's sandbox.write)`;
  const narrow =
    kind === 'root'
      ? `make ${root} read-only in the policy`
      : `take ${root} out of the server's sandbox.write`;
  const readOnly: string[] = [];
  const pinned: string[] = [];
  const held: HeldBase[] = [];
  for (const pattern of patterns) {
    const split = splitInclude(pattern);
    const base = await canonicalLoose(split.base);
    const what = split.glob === '' ? 'the included file' : 'its directory';
    const link = await linkInside(split.base, root);
    if (link !== undefined) {
      throw new Error(
        `the include pattern ${pattern} reaches ${what} through the link ${link} in the server's ${where}, which the server could point at a directory of its own and write policy there; replace the link with the directory it leads to (or write the include with the path it leads to, ${base}), ${narrow}, or narrow the include`,
      );
    }
    if (inside(base, root)) {
      if (await exists(base)) {
        readOnly.push(base);
        pinned.push(...ancestors(base));
        held.push({ base, root });
        continue;
      }
      const make =
        split.glob === ''
          ? `create ${base} so that the sandbox can make it read-only`
          : `create it (mkdir -p ${base}) so that the sandbox can make it read-only`;
      throw new Error(
        `the include pattern ${pattern} could match a file the server creates in its ${where}, and ${what} ${base} does not exist; ${make}, ${narrow}, or narrow the include`,
      );
    }
    if (
      split.glob !== '' &&
      inside(root, base) &&
      couldMatchBelow(split.glob, relative(base, root))
    ) {
      throw new Error(
        `the include pattern ${pattern} could match a file the server creates in its ${where}, which lies inside ${base}; ${narrow}, or narrow the include so that it cannot match there`,
      );
    }
  }
  return { readOnly, pinned, held };
}
