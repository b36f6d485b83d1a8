/** Path helpers that compare by whole segments: the only way this project compares paths. */
import { dirname, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { errnoCode } from '../common/errors.js';
import type { FsView } from './model.js';

/** True when `child` is `parent` or lies inside it, compared by whole path segments. */
export function isInsideOrEqual(child: string, parent: string): boolean {
  if (child.length === parent.length) return child === parent;
  if (child.length < parent.length || !child.startsWith(parent)) return false;
  // The next character must start a new segment (or the parent is `/` itself).
  return parent.endsWith(sep) || child.charCodeAt(parent.length) === SLASH;
}

const SLASH = 0x2f;

/** True when `child` lies strictly inside `parent`. */
export function isStrictlyInside(child: string, parent: string): boolean {
  return child !== parent && isInsideOrEqual(child, parent);
}

/** The path itself and each of its ancestors up to `/`, nearest first. */
export function selfAndAncestors(path: string): string[] {
  const out = [path];
  let cur = path;
  for (;;) {
    const up = dirname(cur);
    if (up === cur) return out;
    out.push(up);
    cur = up;
  }
}

const uris = new Map<string, string>();

/** The `file://` URI of an absolute path, built only with `pathToFileURL` (remembered: lists repeat paths). */
export function toUri(path: string): string {
  let uri = uris.get(path);
  if (uri === undefined) {
    uri = pathToFileURL(path).href;
    if (uris.size > 100_000) uris.clear();
    uris.set(path, uri);
  }
  return uri;
}

/**
 * Compare two strings as their UTF-8 bytes would compare (code point order), without
 * encoding them: UTF-16 differs only where a surrogate meets a unit at or above U+E000.
 */
export function compareUtf8(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x - y;
  }
  return a.length - b.length;
}

const MAX_LINKS = 40;

/**
 * The canonical form of a path that may not exist: `realpath` of it, or of its nearest
 * existing ancestor with the rest appended. A dangling symlink is followed to its target,
 * so a write through it is judged where it would land.
 */
export async function canonicalizeLoose(fs: FsView, path: string, depth = 0): Promise<string> {
  try {
    return await fs.realpath(path);
  } catch (err) {
    const code = errnoCode(err);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
  }
  if (depth > MAX_LINKS)
    throw Object.assign(new Error(`too many symlinks: ${path}`), { code: 'ELOOP' });
  const parent = dirname(path);
  if (parent === path) return path;
  // Only links count towards the limit: a path may have any number of missing components.
  const canonParent = await canonicalizeLoose(fs, parent, depth);
  const base = path.slice(parent === sep ? 1 : parent.length + 1);
  const joined = canonParent === sep ? sep + base : canonParent + sep + base;
  // A dangling symlink as the last component: judge the path it points to.
  try {
    const st = await fs.lstat(joined);
    if (st.isSymbolicLink() && fs.readlink) {
      const target = await fs.readlink(joined);
      const next = target.startsWith(sep) ? target : canonParent + sep + target;
      return await canonicalizeLoose(fs, normalizeLexically(next), depth + 1);
    }
  } catch (err) {
    const code = errnoCode(err);
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
  }
  return joined;
}

/** Resolve `.` and `..` segments lexically and drop a trailing slash. */
export function normalizeLexically(path: string): string {
  const parts: string[] = [];
  for (const seg of path.split(sep)) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') parts.pop();
    else parts.push(seg);
  }
  return sep + parts.join(sep);
}
