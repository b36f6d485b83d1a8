/**
 * What rootsctl's code cache (code-cache.ts) may trust. A code cache is code: V8 deserializes it
 * as bytecode after checking only its version, flags and the source's length (not its bytes, and
 * not a checksum: a flipped byte aborts the process). So a cache is read only from a place no one
 * else can change, only as a regular file of the user's, and only with the seal this module puts
 * on it (a CRC of the source and the cache), which turns a torn or corrupted file into a miss
 * instead of a crash on every later run.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  readlinkSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

/** A cache is a few hundred KiB; a file far larger is not one of ours and is not read into memory. */
export const MAX_CACHE_BYTES = 32 * 1024 * 1024;

/** How sealed caches start; the CRC follows (4 bytes, big-endian), then V8's data. */
const MAGIC = Buffer.from('mcprv8\x00\x01', 'latin1');
const HEADER = MAGIC.length + 4;

/** More links than this on the way to the cache directory: not followed (the kernel stops at 40). */
const MAX_LINKS = 40;

export const uid = (): number => process.getuid?.() ?? -1;

/**
 * Whether no one but root and this user can change what `path` (absolute, normalized) names:
 * every directory on the way, links followed as the kernel follows them, is owned by root or the
 * user and writable by no one else, unless it is sticky (like /tmp: others cannot rename or
 * remove what is ours there), and every link on the way is owned by root or the user. A missing
 * part ends the walk: what is made below a trusted directory is made by this process. Without
 * this, a cache directory below a directory another user can write could be swapped for theirs
 * between the checks and the open, and rootsctl run as root with a user's environment (`sudo
 * -E`) would make directories and write files wherever that user's links point.
 */
export function trustedPath(path: string): boolean {
  try {
    const me = uid();
    const todo = path.split('/').filter((p) => p !== '' && p !== '.');
    let at = '/';
    if (!trustedDir(lstatSync(at), me)) return false;
    let links = 0;
    while (todo.length > 0) {
      const part = todo.shift()!;
      if (part === '..') {
        at = dirname(at);
        continue;
      }
      const next = join(at, part);
      const st = lstatSync(next, { throwIfNoEntry: false });
      if (st === undefined) return true;
      if (st.isSymbolicLink()) {
        if (++links > MAX_LINKS || (st.uid !== 0 && st.uid !== me)) return false;
        const target = readlinkSync(next);
        if (target.startsWith('/')) at = '/';
        todo.unshift(...target.split('/').filter((p) => p !== '' && p !== '.'));
        continue;
      }
      if (!trustedDir(st, me)) return false;
      at = next;
    }
    return true;
  } catch {
    // Unreadable, not a directory, a name too long: no cache, as on a first run.
    return false;
  }
}

function trustedDir(st: { uid: number; mode: number; isDirectory(): boolean }, me: number) {
  if (!st.isDirectory() || (st.uid !== 0 && st.uid !== me)) return false;
  return (st.mode & 0o022) === 0 || (st.mode & 0o1000) !== 0;
}

/** A real directory (not a link) of this user's, closed to group and others, on a trusted path. */
export function ownDir(dir: string): boolean {
  try {
    const st = lstatSync(dir, { throwIfNoEntry: false });
    if (st === undefined || !st.isDirectory() || st.uid !== uid() || (st.mode & 0o077) !== 0)
      return false;
    return trustedPath(dir);
  } catch {
    return false;
  }
}

/**
 * The file's bytes, if it is a regular file of this user's that no one else may write, of a
 * cache's size. Opened without following a link and without waiting (a FIFO in its place would
 * block the open for ever); what is checked is the opened file, not the name.
 */
export function readOwn(file: string): Buffer | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.uid !== uid() || (st.mode & 0o022) !== 0) return undefined;
    if (st.size > MAX_CACHE_BYTES) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function crc(source: Buffer, data: Uint8Array): number {
  // Loaded only when there is a cache to seal or check: zlib costs a plain run nothing.
  const { crc32 } = process.getBuiltinModule('node:zlib');
  return crc32(data, crc32(source));
}

/** `data`, V8's cache for `source`, with the seal `unseal` checks. */
export function seal(source: Buffer, data: Buffer): Buffer {
  const header = Buffer.alloc(HEADER);
  MAGIC.copy(header);
  header.writeUInt32BE(crc(source, data), MAGIC.length);
  return Buffer.concat([header, data]);
}

/** V8's cache from a sealed file, if the seal is whole and made for exactly this source. */
export function unseal(source: Buffer, file: Buffer): Buffer | undefined {
  if (file.length <= HEADER || !file.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const data = file.subarray(HEADER);
  return crc(source, data) === file.readUInt32BE(MAGIC.length) ? data : undefined;
}
