/** Path helpers that compare by whole segments: the only way this project compares paths. */
import { dirname, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { errnoCode } from '../common/errors.js';
import type { FsView } from './model.js';

/** True when `child` is `parent` or lies inside it, compared by whole path segments. */
export function isInsideOrEqual(child: string, parent: string): boolean {
  if (child === parent) return true;
  const prefix = parent.endsWith(sep) ? parent : parent + sep;
  return child.startsWith(prefix);
}

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

/** The `file://` URI of an absolute path, built only with `pathToFileURL`. */
export function toUri(path: string): string {
  return pathToFileURL(path).href;
}

/** Compare two strings as UTF-8 bytes (the order of every roots list). */
export function compareUtf8(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
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
  if (depth > MAX_LINKS) throw Object.assign(new Error(`too many symlinks: ${path}`), { code: 'ELOOP' });
  const parent = dirname(path);
  if (parent === path) return path;
  const canonParent = await canonicalizeLoose(fs, parent, depth + 1);
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
