/** Expanding a policy glob to existing entries (docs/policy.md rule 3). */
import type { Stats } from 'node:fs';
import { basename, sep } from 'node:path';
import { errnoCode } from '../common/errors.js';
import { globTest, splitGlob } from './expand.js';
import type { FsView } from './model.js';
import { wayIsSeen, type GlobWatch } from './link-way.js';
import { childPath, isStrictlyInside } from './paths.js';

export type EntryKind = 'directory' | 'file' | 'any';

export interface GlobMatch {
  /** The matched path as walked from the canonical base (for a link: the link itself). */
  path: string;
  /** Its canonical path (`realpath`). */
  canonical: string;
  /**
   * The base name of `path`: the name an entry without one of its own gives the root. Kept on
   * the match, so that such entries list the matches themselves (entry.ts `applyExpansion`).
   */
  name: string;
}

export interface GlobResult {
  matches: GlobMatch[];
  /** Directories that could not be read, with the errno code. */
  unreadable: { path: string; code: string }[];
  /** Symlinks dropped because their target is not something the glob itself would grant. */
  outsideBase: string[];
  /** Symlinks dropped because they lead through a path whose changes the daemon does not see (link-way.ts). */
  unwatchedWay: string[];
  /** Entries dropped because their name is not valid UTF-8. */
  notUtf8: string[];
  /** Every symlink the pattern matched, kept or not (a later update looks at each again). */
  links: string[];
  /** The static base directory, and whether the glob walks recursively (`**`). */
  base: string;
  recursive: boolean;
  /** How many directory levels below `base` the walk reads (Infinity for `**`). */
  depth: number;
}

/** A glob's static base, the part below it, and how deep a walk of it goes. */
export function globShape(pattern: string): {
  base: string;
  glob: string;
  segments: string[];
  recursive: boolean;
  depth: number;
} {
  const { base, glob } = splitGlob(pattern);
  const segments = glob.split('/').filter((s) => s !== '');
  const recursive = segments.includes('**');
  return { base, glob, segments, recursive, depth: recursive ? Infinity : segments.length - 1 };
}

/** Directories a `**` walk does not enter unless the pattern names them. */
export const HEAVY_DIRS = ['node_modules'];

/**
 * Every existing entry matching `pattern` (absolute) of the given kind. Walks the canonical
 * base (`resolvedBase` when the caller has already resolved it, else `realpath` of the
 * static base) and never follows a symlinked directory while walking. A matched symlink is
 * kept only if its canonical target is itself granted by the glob: strictly inside the base,
 * and equal to or inside an entry the pattern matches. So a link `evil/docs -> ..` matched
 * by a `docs` glob cannot yield the base or another repository, and no link reaches a dot
 * directory that `*` skips. `*` and `**` do not match dot names unless spelled.
 */
export async function expandGlob(
  fs: FsView,
  pattern: string,
  kind: EntryKind,
  resolvedBase?: string,
): Promise<GlobResult> {
  const { base, recursive, depth } = globShape(pattern);
  const result: GlobResult = {
    matches: [],
    unreadable: [],
    outsideBase: [],
    unwatchedWay: [],
    notUtf8: [],
    links: [],
    base,
    recursive,
    depth,
  };
  let canonicalBase: string;
  try {
    canonicalBase = resolvedBase ?? (await fs.realpath(base));
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return result;
    result.unreadable.push({ path: base, code: code ?? 'EIO' });
    return result;
  }
  await globWalker(fs, pattern, kind, canonicalBase, result).walk(canonicalBase, '', 0);
  return result;
}

/** The part of a directory entry the walk reads (a `Dirent`, or built from `lstat`). */
export interface EntryType {
  name: string;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}

/** The walk of one glob from its canonical base, adding what it finds to `result`. */
export interface GlobWalker {
  /** Read `dir` (`rel` below the base, `level` levels down) and everything the glob enters below. */
  walk(dir: string, rel: string, level: number): Promise<void>;
  /** One entry of `dir`, as `walk` treats each entry it reads. */
  visit(dir: string, rel: string, level: number, entry: EntryType): Promise<void>;
  /** A matched symlink, judged again (where it leads may have changed). */
  consider(path: string, isLink: boolean, isDir: boolean): Promise<void>;
  /** Whether the walk enters a directory named `name`, `level` levels below the base. */
  enters(name: string, level: number): boolean;
}

export function globWalker(
  fs: FsView,
  pattern: string,
  kind: EntryKind,
  canonicalBase: string,
  result: GlobResult,
): GlobWalker {
  const { glob, segments, recursive, depth } = globShape(pattern);
  const whole = globTest(glob);
  const perSegment = recursive ? [] : segments.map((s) => globTest(s));
  const spellsDot = segments.some((s) => s.startsWith('.'));
  const namesHeavy = new Set(HEAVY_DIRS.filter((h) => segments.includes(h)));
  // `dir/*` and the like: the one segment's matcher is the whole glob's, already asked of the
  // name (100,000 entries asked twice cost a tenth of a big start).
  const oneSegment = !recursive && segments.length === 1 && glob === segments[0];
  // How the daemon watches this glob (entry.ts `watchFor`): a matched link must lead only
  // through what that watch sees change, or it would be granted on after it is re-pointed.
  const way: GlobWatch = {
    writtenBase: globShape(pattern).base,
    canonicalBase,
    recursive,
    depth,
    ignore: [...HEAVY_DIRS, '.git'].filter((h) => !pattern.includes(`/${h}`)),
  };

  /** Whether the walk enters a directory of this name found `level` levels below the base. */
  const enters = (name: string, level: number): boolean =>
    recursive
      ? (spellsDot || !name.startsWith('.')) && (namesHeavy.has(name) || !HEAVY_DIRS.includes(name))
      : level < depth && perSegment[level]!(name);

  /** One entry found in `dir` (`rel` below the base, `level` levels down): match it, enter it. */
  const visit = async (dir: string, rel: string, level: number, entry: EntryType) => {
    const name = entry.name;
    const path = childPath(dir, name);
    // A name that is not valid UTF-8 reads as U+FFFD, and so does a name really spelled with it:
    // the decoded path names the latter, whatever the entry read was. Judge what the path
    // names (its own lstat), never the entry's type, or a directory named by the byte 0xFF would
    // stand for a link named U+FFFD beside it, and the link's target would be listed.
    if (!name.includes('\uFFFD')) return visitFound(path, rel, level, entry);
    const st = await lstatOf(fs, path);
    if (st === undefined) {
      result.notUtf8.push(path);
      return;
    }
    await visitFound(path, rel, level, {
      name,
      isDirectory: () => st.isDirectory(),
      isSymbolicLink: () => st.isSymbolicLink(),
    });
  };

  /**
   * `visit` once the entry is known to exist. What needs no system call (an entry that is no
   * link and is not entered) is done at once, with no promise: a base of 100,000 entries
   * would otherwise cost 100,000 pending promises.
   */
  const visitFound = (
    path: string,
    rel: string,
    level: number,
    entry: EntryType,
  ): Promise<void> | undefined => {
    const name = entry.name;
    const segmentOk = recursive ? true : perSegment[level]!(name);
    if (!segmentOk) return undefined;
    const relPath = rel === '' ? name : `${rel}/${name}`;
    const isLast = !recursive && level === depth;
    const link = entry.isSymbolicLink();
    let pending: Promise<void> | undefined;
    if ((recursive || isLast) && (oneSegment || whole(relPath))) {
      if (link) {
        result.links.push(path);
        pending = consider(path, true, entry.isDirectory());
      } else {
        considerPlain(path, entry.isDirectory(), name);
      }
    }
    if (entry.isDirectory() && !link && enters(name, level)) {
      const below = walk(path, relPath, level + 1);
      pending = pending === undefined ? below : Promise.all([pending, below]).then(() => {});
    }
    return pending;
  };

  const walk = async (dir: string, rel: string, level: number): Promise<void> => {
    let entries;
    try {
      entries = await fs.readdir(dir);
    } catch (err) {
      const code = errnoCode(err);
      if (code === 'ENOENT' || code === 'ENOTDIR') return; // vanished while walking
      result.unreadable.push({ path: dir, code: code ?? 'EIO' });
      return;
    }
    // Most directories a `**` walk reads hold nothing it waits for: no array, set or promise
    // is made for them (a walk of 10,000 directories made 10,000 of each).
    let pending: Promise<void>[] | undefined;
    /** Names read here with U+FFFD: several entries may read as one, which names one of them. */
    let replaced: Set<string> | undefined;
    for (const entry of entries) {
      let p: Promise<void> | undefined;
      if (!entry.name.includes('\uFFFD'))
        p = visitFound(childPath(dir, entry.name), rel, level, entry);
      else if (replaced?.has(entry.name)) result.notUtf8.push(childPath(dir, entry.name));
      else {
        (replaced ??= new Set()).add(entry.name);
        p = visit(dir, rel, level, entry);
      }
      if (p !== undefined) (pending ??= []).push(p);
    }
    if (pending !== undefined) await Promise.all(pending);
  };

  const consider = async (path: string, isLink: boolean, isDir: boolean): Promise<void> => {
    if (!isLink) {
      considerPlain(path, isDir);
      return;
    }
    let canonical: string;
    let targetIsDir: boolean;
    try {
      canonical = await fs.realpath(path);
      targetIsDir = (await fs.stat(canonical)).isDirectory();
    } catch {
      return; // dangling or looping link: nothing to grant
    }
    if (!grantedByGlob(canonical)) {
      result.outsideBase.push(path);
      return;
    }
    const readlink = fs.readlink?.bind(fs);
    if (
      readlink !== undefined &&
      !(await wayIsSeen({ lstat: (p) => fs.lstat(p), readlink }, path, way))
    ) {
      result.unwatchedWay.push(path);
      return;
    }
    if (kind === 'directory' && !targetIsDir) return;
    if (kind === 'file' && targetIsDir) return;
    result.matches.push({ path, canonical, name: basename(path) });
  };

  /** A matched entry that is no link: the walk starts at the canonical base and never enters a link, so its path is canonical. */
  const considerPlain = (path: string, isDir: boolean, name = basename(path)): void => {
    if (kind === 'directory' && !isDir) return;
    if (kind === 'file' && isDir) return;
    result.matches.push({ path, canonical: path, name });
  };

  /** Whether a link's canonical target is, or lies inside, an entry the glob matches. */
  const grantedByGlob = (target: string): boolean => {
    if (!isStrictlyInside(target, canonicalBase)) return false;
    const rel = target.slice(canonicalBase === sep ? 1 : canonicalBase.length + 1).split(sep);
    for (let n = 1; n <= rel.length; n++) if (whole(rel.slice(0, n).join('/'))) return true;
    return false;
  };

  return { walk, visit, consider, enters };
}

async function lstatOf(fs: FsView, path: string): Promise<Stats | undefined> {
  try {
    return await fs.lstat(path);
  } catch {
    return undefined;
  }
}
