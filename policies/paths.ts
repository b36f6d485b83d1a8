/** Path helpers that compare by whole segments: the only way this project compares paths. */
import { dirname, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { FsView } from './model.js';
import { pathProbe } from './fs.js';
import { MAX_NAME_BYTES, MAX_PATH_BYTES } from '../common/linux-limits.js';

export { isInsideOrEqual, isStrictlyInside } from '../common/segments.js';

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

/**
 * Absolute paths of letters, digits, `.`, `_` and `-` only (not `~`: Node escapes it). Lexically
 * normal ones (`NOT_NORMAL`) are neither escaped nor rewritten by `pathToFileURL`, so their URI
 * is `file://` + the path (test/policies/uri-spelling.test.ts).
 */
const PLAIN_PATH = /^(?:\/[A-Za-z0-9._-]+)+$/;

/**
 * The `file://` URI of an absolute path: `pathToFileURL`'s spelling. A plain path is spelled
 * without it (a 100,000-root list would pay a URL object each); the others are remembered, as
 * lists repeat paths.
 */
export function toUri(path: string): string {
  if (PLAIN_PATH.test(path) && !NOT_NORMAL.test(path)) return `file://${path}`;
  let uri = uris.get(path);
  if (uri === undefined) {
    uri = fileUri(path);
    if (uris.size > 100_000) uris.clear();
    uris.set(path, uri);
  }
  return uri;
}

/**
 * Control characters at the end of a path: `pathToFileURL` escapes tab, LF and CR, and the URL
 * parser strips the rest from the end of the text, so `/g/secret\u0001` would be listed as
 * `file:///g/secret`, another directory. They are escaped here.
 */
// eslint-disable-next-line no-control-regex
const TRAILING_CONTROLS = /[\u0001-\u001f]+$/;

function fileUri(path: string): string {
  const tail = TRAILING_CONTROLS.exec(path);
  if (tail === null) return pathToFileURL(path).href;
  const escaped = [...tail[0]].map(
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`,
  );
  return pathToFileURL(path.slice(0, tail.index)).href + escaped.join('');
}

/** A doubled slash, a `.` or `..` segment, or a trailing slash: what `pathToFileURL` rewrites. */
const NOT_NORMAL = /\/\/|\/\.\.?(?:\/|$)|.\/$/;

/**
 * The path that `toUri(path)` names, read back from the URI. The roots list sends URIs and the
 * access decision compares paths: both use this, so they cannot disagree on a spelling. (The
 * URI's percent-encoding round-trips exactly, so only a path that is not lexically normal,
 * which `pathToFileURL` rewrites, needs the round trip.)
 */
export function listedPath(path: string): string {
  return NOT_NORMAL.test(path) ? fileURLToPath(toUri(path)) : path;
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
 * `rel` (segments joined by `/`, no leading slash) below the directory `dir`. The one way this
 * project appends to a path: `/` + `etc` is `/etc`, never `//etc`, so the roots list and the
 * access decision, which both build paths here, cannot disagree on a spelling.
 */
export function childPath(dir: string, rel: string): string {
  if (rel === '') return dir;
  return dir === sep ? sep + rel : dir + sep + rel;
}

/** `path` (equal to or inside `from`) moved to the same place below `to`. */
export function rebase(path: string, from: string, to: string): string {
  if (path === from) return to;
  return childPath(to, path.slice(from === sep ? 1 : from.length + 1));
}

/**
 * The canonical form of a path that may not exist: `realpath` of it, or of its nearest
 * existing ancestor with the rest appended. A dangling symlink is followed to its target,
 * so a write through it is judged where it would land.
 *
 * The cost does not grow with the number of missing components: after one failed `realpath`
 * the existing part is walked from the top, one `lstat` per component, and the first missing
 * component ends the walk (nothing below a missing entry can exist, so nothing below it can be
 * a link).
 */
export async function canonicalizeLoose(fs: FsView, path: string, depth = 0): Promise<string> {
  const probe = pathProbe(fs);
  const whole = await probe.realpath(path);
  if (whole !== undefined) return whole;
  if (depth > MAX_LINKS)
    throw Object.assign(new Error(`too many symlinks: ${path}`), { code: 'ELOOP' });
  const segments = path.split(sep).filter((s) => s !== '');
  let canon: string = sep;
  for (let i = 0; i < segments.length; i++) {
    const here = childPath(canon, segments[i]!);
    const st = await probe.lstat(here);
    // The first missing component: the rest is appended as written.
    if (st === undefined) return withinLimits(canon, segments.slice(i));
    if (!st.isSymbolicLink()) {
      canon = here;
      // Below anything but a directory nothing exists (the kernel's ENOTDIR).
      if (!st.isDirectory() && i + 1 < segments.length) {
        return withinLimits(canon, segments.slice(i + 1));
      }
      continue;
    }
    const target = await probe.realpath(here);
    if (target !== undefined) {
      canon = target;
      continue;
    }
    // A dangling link: judge the path it points to, with the rest appended. A `..` in its target
    // is taken where the kernel takes it, after the links before it (`sub/l/../x`, with `l` a
    // link elsewhere, is the `x` beside the link's target), never as text; a `..` the kernel
    // cannot take (after a missing name) leaves nothing to open.
    const rest = segments.slice(i + 1).join(sep);
    if (probe.readlink === undefined) return childPath(here, rest);
    const link = await probe.readlink(here);
    const next = await physicalDots(
      fs,
      childPath(link.startsWith(sep) ? link : childPath(canon, link), rest),
    );
    if (next === undefined) {
      throw Object.assign(new Error(`${here} leads to a .. after a missing name`), {
        code: 'ENOENT',
      });
    }
    return canonicalizeLoose(fs, normalizeLexically(next), depth + 1);
  }
  return canon;
}

/**
 * `path` with its `..` segments taken as the kernel takes them: from where the path before each
 * one leads, links followed (`link/..` is the parent of the link's target, not the directory
 * holding the link), never as text. Undefined when the path before a `..` does not lead to a
 * directory: the kernel refuses such a path, and a server that joins it as text opens another.
 */
export async function physicalDots(fs: FsView, path: string): Promise<string | undefined> {
  // Most paths have no `..`: no split of a 4,000-byte path into its 2,000 names for them.
  if (!path.includes('/..')) return path;
  const segments = path.split(sep);
  const last = segments.lastIndexOf('..');
  if (last < 0) return path;
  const head = await pathProbe(fs).realpath(segments.slice(0, last + 1).join(sep) || sep);
  if (head === undefined) return undefined;
  return normalizeLexically([head, ...segments.slice(last + 1)].join(sep));
}

/**
 * `existing` with the `missing` segments appended, unless the kernel would refuse the result (the
 * missing part was never asked of it).
 */
function withinLimits(existing: string, missing: string[]): string {
  const path = childPath(existing, missing.join(sep));
  const tooLong =
    Buffer.byteLength(path) > MAX_PATH_BYTES ||
    missing.some((s) => Buffer.byteLength(s) > MAX_NAME_BYTES);
  if (tooLong) throw Object.assign(new Error(`name too long: ${path}`), { code: 'ENAMETOOLONG' });
  return path;
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
