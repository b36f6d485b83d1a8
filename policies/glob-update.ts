/**
 * Bringing a glob's last expansion up to date after changes under its base, by walking only the
 * changed subtrees again: what a change at a path can alter is that path, what lies under it,
 * and where a matched symlink leads. The result is the one a full walk would give; whatever the
 * update cannot show is so (an ancestor of a change that the walk would not enter, a change at
 * or above the base), it declines and the caller walks the whole glob.
 */
import { constants } from 'node:fs';
import { basename, dirname, sep } from 'node:path';
import { errnoCode } from '../common/errors.js';
import {
  globShape,
  globWalker,
  type EntryKind,
  type EntryType,
  type GlobMatch,
  type GlobResult,
} from './glob.js';
import type { FsView } from './model.js';
import { isInsideOrEqual, isStrictlyInside } from './paths.js';
import { nextTurn, SLICE, without } from './slices.js';

/**
 * An update's walk. `result.matches` is the earlier matches the update did not look at again,
 * in their order (the first `kept`), then those it found judging the changed subtrees and every
 * matched link again; `dropped` is the earlier matches it looked at again (objects of
 * `old.matches`). So a caller can tell what changed from those two short lists, without going
 * through every match.
 */
export interface GlobUpdate {
  result: GlobResult;
  kept: number;
  dropped: GlobMatch[];
}

/**
 * `old` brought up to date for `changed` (canonical paths strictly inside `canonicalBase`), or
 * undefined when only a full walk can tell.
 */
export async function updateGlob(
  fs: FsView,
  pattern: string,
  kind: EntryKind,
  canonicalBase: string,
  old: GlobResult,
  changed: string[],
): Promise<GlobUpdate | undefined> {
  if (changed.some((p) => !isStrictlyInside(p, canonicalBase))) return undefined;
  // A change inside another changed path is walked with it.
  const sorted = [...new Set(changed)].sort((a, b) => a.length - b.length);
  const regions: string[] = [];
  for (const p of sorted) if (!regions.some((r) => isInsideOrEqual(p, r))) regions.push(p);
  const inRegion = (p: string) => regions.some((r) => isInsideOrEqual(p, r));
  if (old.unreadable.some((u) => regions.some((r) => isStrictlyInside(r, u.path))))
    return undefined;

  const links = new Set(old.links);
  // Every matched symlink is judged again below: its target may lie in a changed subtree.
  // One pass over the earlier matches, the only one an update makes, a slice at a time; it
  // notes where the matches to look at again are (a new folder has none), and the kept ones
  // are copied into one array made at its size (slices.ts `without`).
  const one = regions.length === 1 ? regions[0]! : undefined;
  const under = one === undefined ? '' : one === sep ? sep : one + sep;
  const again: number[] = [];
  for (let i = 0; i < old.matches.length; i++) {
    if (i > 0 && i % SLICE === 0) await nextTurn();
    const p = old.matches[i]!.path;
    if (
      (links.size > 0 && links.has(p)) ||
      (one !== undefined ? p === one || p.startsWith(under) : inRegion(p))
    )
      again.push(i);
  }
  const dropped = again.map((i) => old.matches[i]!);
  // Room for what the walk below finds again: a push past the end would copy the whole list.
  const keptMatches = await without(old.matches, again, [], Math.max(64, again.length * 2));
  const kept = keptMatches.length;
  const result: GlobResult = {
    ...old,
    matches: keptMatches,
    unreadable: old.unreadable.filter((u) => !inRegion(u.path)),
    outsideBase: [],
    unwatchedWay: [],
    notUtf8: old.notUtf8.filter((n) => !inRegion(n)),
    links: [],
  };
  const walker = globWalker(fs, pattern, kind, canonicalBase, result);
  const { depth, recursive } = globShape(pattern);
  const plans = await Promise.all(
    regions.map((r) =>
      planRegion(
        fs,
        canonicalBase,
        r,
        (name, level) => walker.enters(name, level),
        recursive,
        depth,
      ),
    ),
  );
  if (plans.includes(undefined)) return undefined;
  await Promise.all(
    plans.flatMap((plan) =>
      plan === 'nothing' || plan === undefined
        ? []
        : [walker.visit(plan.dir, plan.rel, plan.level, plan.entry)],
    ),
  );
  const keptLinks = old.links.filter((l) => !inRegion(l));
  result.links.push(...keptLinks);
  await Promise.all(keptLinks.map((l) => walker.consider(l, true, false)));
  return { result, kept, dropped };
}

type Plan = 'nothing' | { dir: string; rel: string; level: number; entry: EntryType };

/**
 * How to walk a changed path again as the full walk would meet it: as an entry of its parent,
 * provided the walk reaches that parent (each ancestor below the base a readable directory,
 * not a link, that the glob enters). A path the walk cannot reach yields nothing; a case the
 * update cannot judge from here is undefined.
 */
async function planRegion(
  fs: FsView,
  base: string,
  path: string,
  enters: (name: string, level: number) => boolean,
  recursive: boolean,
  depth: number,
): Promise<Plan | undefined> {
  const rel = path.slice(base === sep ? 1 : base.length + 1);
  const names = rel.split(sep);
  const level = names.length - 1;
  if (!recursive && level > depth) return 'nothing';
  let dir = base;
  for (let i = 0; i < level; i++) {
    const name = names[i]!;
    dir = dir === sep ? `${sep}${name}` : `${dir}${sep}${name}`;
    if (!enters(name, i)) return 'nothing';
    let st;
    try {
      st = await fs.lstat(dir);
    } catch (err) {
      const code = errnoCode(err);
      // Gone: nothing below it is reached (its removal is a change of its own).
      return code === 'ENOENT' || code === 'ENOTDIR' ? 'nothing' : undefined;
    }
    if (!st.isDirectory() || st.isSymbolicLink()) return 'nothing';
  }
  // The walk reads each ancestor; one it cannot read is reported as unreadable by a full walk.
  for (const a of [base, ...ancestorsBelow(base, dirname(path))]) {
    try {
      await fs.access(a, constants.R_OK | constants.X_OK);
    } catch {
      return undefined;
    }
  }
  const name = basename(path);
  let st;
  try {
    st = await fs.lstat(path);
  } catch (err) {
    const code = errnoCode(err);
    // A name that is not valid UTF-8 cannot be looked up by its decoded spelling.
    if ((code === 'ENOENT' || code === 'ENOTDIR') && !name.includes('\uFFFD')) return 'nothing';
    return undefined;
  }
  const entry: EntryType = {
    name,
    isDirectory: () => st.isDirectory(),
    isSymbolicLink: () => st.isSymbolicLink(),
  };
  return { dir: dirname(path), rel: names.slice(0, -1).join('/'), level, entry };
}

/** `dir` and its ancestors strictly below `base`, outermost first. */
function ancestorsBelow(base: string, dir: string): string[] {
  const out: string[] = [];
  for (let cur = dir; isStrictlyInside(cur, base); cur = dirname(cur)) out.unshift(cur);
  return out;
}
