/** Expanding a policy glob to existing entries (POLICY.md rule 3). */
import { sep } from 'node:path';
import picomatch from 'picomatch';
import { errnoCode } from '../common/errors.js';
import { GLOB_OPTIONS, splitGlob } from './expand.js';
import type { FsView } from './model.js';
import { isInsideOrEqual } from './paths.js';

export type EntryKind = 'directory' | 'file' | 'any';

export interface GlobMatch {
  /** The matched path as walked (not canonical). */
  path: string;
  /** Its canonical path (`realpath`). */
  canonical: string;
}

export interface GlobResult {
  matches: GlobMatch[];
  /** Directories that could not be read, with the errno code. */
  unreadable: { path: string; code: string }[];
  /** Symlinks dropped because their target lies outside the glob's base. */
  outsideBase: string[];
  /** Entries dropped because their name is not valid UTF-8. */
  notUtf8: string[];
  /** The static base directory, and whether the glob walks recursively (`**`). */
  base: string;
  recursive: boolean;
  /** How many directory levels below `base` the walk reads (Infinity for `**`). */
  depth: number;
}

/** Directories a `**` walk does not enter unless the pattern names them. */
export const HEAVY_DIRS = ['node_modules'];

/**
 * Every existing entry matching `pattern` (absolute) of the given kind. Never follows a
 * symlinked directory while walking; keeps a matched symlink only if its canonical target
 * lies inside the canonical base; `*` and `**` do not match dot names unless spelled.
 */
export async function expandGlob(
  fs: FsView,
  pattern: string,
  kind: EntryKind,
): Promise<GlobResult> {
  const { base, glob } = splitGlob(pattern);
  const segments = glob.split('/').filter((s) => s !== '');
  const recursive = segments.includes('**');
  const depth = recursive ? Infinity : segments.length - 1;
  const result: GlobResult = {
    matches: [],
    unreadable: [],
    outsideBase: [],
    notUtf8: [],
    base,
    recursive,
    depth,
  };
  let canonicalBase: string;
  try {
    canonicalBase = await fs.realpath(base);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return result;
    result.unreadable.push({ path: base, code: code ?? 'EIO' });
    return result;
  }
  const whole = picomatch(glob, GLOB_OPTIONS);
  const perSegment = recursive ? [] : segments.map((s) => picomatch(s, GLOB_OPTIONS));
  const spellsDot = segments.some((s) => s.startsWith('.'));
  const namesHeavy = new Set(HEAVY_DIRS.filter((h) => segments.includes(h)));

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
    const descend: Promise<void>[] = [];
    for (const entry of entries) {
      const name = entry.name;
      const path = dir === sep ? sep + name : dir + sep + name;
      const relPath = rel === '' ? name : `${rel}/${name}`;
      if (name.includes('\uFFFD') && !(await exists(fs, path))) {
        result.notUtf8.push(path);
        continue;
      }
      const segmentOk = recursive ? true : perSegment[level]!(name);
      if (!segmentOk) continue;
      const isLast = !recursive && level === depth;
      if (recursive || isLast) {
        if (whole(relPath))
          descend.push(consider(path, entry.isSymbolicLink(), entry.isDirectory()));
      }
      const mayDescend =
        entry.isDirectory() &&
        !entry.isSymbolicLink() &&
        (recursive
          ? (spellsDot || !name.startsWith('.')) &&
            (namesHeavy.has(name) || !HEAVY_DIRS.includes(name))
          : level < depth);
      if (mayDescend) descend.push(walk(path, relPath, level + 1));
    }
    await Promise.all(descend);
  };

  const consider = async (path: string, isLink: boolean, isDir: boolean): Promise<void> => {
    let canonical: string;
    let targetIsDir = isDir;
    if (isLink) {
      try {
        canonical = await fs.realpath(path);
        targetIsDir = (await fs.stat(canonical)).isDirectory();
      } catch {
        return; // dangling or looping link: nothing to grant
      }
      if (!isInsideOrEqual(canonical, canonicalBase)) {
        result.outsideBase.push(path);
        return;
      }
    } else {
      // Walking never enters a symlink, so below the canonical base a walked path is canonical.
      canonical = canonicalBase === base ? path : canonicalBase + path.slice(base.length);
    }
    if (kind === 'directory' && !targetIsDir) return;
    if (kind === 'file' && targetIsDir) return;
    result.matches.push({ path, canonical });
  };

  await walk(base, '', 0);
  return result;
}

async function exists(fs: FsView, path: string): Promise<boolean> {
  try {
    await fs.lstat(path);
    return true;
  } catch {
    return false;
  }
}
