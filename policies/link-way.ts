/**
 * Whether the way a glob-matched link resolves lies where the daemon sees it change.
 *
 * A matched link is judged by where it leads (glob.ts `grantedByGlob`), and judged again only when
 * the daemon sees a change: in the glob's watched tree (its base, recursively for `**` except the
 * heavy directories it skips, else to the glob's depth), or on the way to the base (pinned, see
 * anchor.ts). A link that leads through anything else — a link or a directory outside the base
 * (`w/r/l -> ../../o/hop`, `o/hop -> w/r/x`), below the depth a `*` glob watches, inside a
 * skipped `node_modules` — can be re-pointed, renamed or removed there unseen: the daemon kept
 * granting its old target while a full resolution (the next rescan, a restart) no longer would.
 * So such a link is not granted (deny by default), at every resolution alike, and its warning
 * says why. Each path the kernel visits resolving the link is checked, one component and one
 * link at a time, as `linksOnTheWay` walks (common/links-on-the-way.ts).
 */
import { dirname, join, sep } from 'node:path';
import { isInsideOrEqual, isStrictlyInside } from './paths.js';

/** What the walk reads. */
export interface WayFs {
  lstat(path: string): Promise<{ isSymbolicLink(): boolean }>;
  readlink(path: string): Promise<string>;
}

/** How the daemon watches one glob (entry.ts `watchFor`), seen from the canonical base. */
export interface GlobWatch {
  /** The glob's static base as written, and where it led when walked. */
  writtenBase: string;
  canonicalBase: string;
  recursive: boolean;
  /** Levels below the base whose directories are watched, for a glob without `**`. */
  depth: number;
  /** Directory names a recursive watch does not enter. */
  ignore: readonly string[];
}

/** As the kernel's ELOOP: past it the link resolves nowhere, and a full walk drops it too. */
const MAX_LINKS = 40;

/** Whether a change at `path` (its creation, removal, rename, re-pointing) is seen. */
export function seenChange(path: string, w: GlobWatch): boolean {
  // On the way to the base: pinned, and a change there changes the entry's anchors.
  if (isInsideOrEqual(w.canonicalBase, path) || isInsideOrEqual(w.writtenBase, path)) return true;
  if (!isStrictlyInside(path, w.canonicalBase)) return false;
  // Inside: seen when its directory is watched.
  const rel = dirname(path).slice(w.canonicalBase.length + 1);
  const dirs = rel === '' ? [] : rel.split(sep);
  return w.recursive ? !dirs.some((d) => w.ignore.includes(d)) : dirs.length <= w.depth;
}

/**
 * Whether every path visited resolving the link at `link` is one where a change is seen. A
 * dangling or looping link is not judged here (it grants nothing either way).
 */
export async function wayIsSeen(fs: WayFs, link: string, w: GlobWatch): Promise<boolean> {
  if (!seenChange(link, w)) return false;
  let at = dirname(link);
  const todo = [link.slice(at === sep ? 1 : at.length + 1)];
  let links = 0;
  while (todo.length > 0) {
    const name = todo.shift()!;
    if (name === '' || name === '.') continue;
    const next = name === '..' ? dirname(at) : join(at, name);
    if (!seenChange(next, w)) return false;
    if (name === '..') {
      at = next;
      continue;
    }
    let isLink: boolean;
    try {
      isLink = (await fs.lstat(next)).isSymbolicLink();
    } catch {
      return true;
    }
    if (!isLink) {
      at = next;
      continue;
    }
    if (++links > MAX_LINKS) return true;
    let target: string;
    try {
      target = await fs.readlink(next);
    } catch {
      return true;
    }
    todo.unshift(...target.split('/'));
    if (target.startsWith('/')) at = sep;
  }
  return true;
}
