/**
 * What rootsctl's code cache (code-cache.ts) may trust. A code cache is code: V8 deserializes it
 * as bytecode after checking only its version, flags and the source's length (not its bytes, and
 * not a checksum: a flipped byte aborts the process). So a cache is read only from a place no one
 * else can change, only as a regular file of the user's, and only with the seal this module puts
 * on it (a checksum of the source and the cache), which turns a torn or corrupted file into a miss
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

/** How sealed caches start (the last byte: the seal's version); the checksum follows (4 bytes, big-endian), then V8's data. */
const MAGIC = Buffer.from('mcprv8\x00\x02', 'latin1');
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

/**
 * The seal's checksum of `source` then `data`: Fletcher's sums over 64-bit words (modulo 2^64),
 * folded to 32 bits, with both lengths. It catches what the seal is for, a torn or damaged file
 * (any changed word changes it), not a forger: only the user can write where a cache is read.
 * Computed by a WebAssembly function (below) because the seal used to be zlib's CRC-32, and
 * loading `node:zlib` for it cost more than the rest of the check; the same sums in JavaScript
 * run interpreted and cost more still (bench/FINDINGS.md). Undefined where WebAssembly cannot run
 * (`--jitless`): then there is no cache, as on a first run.
 */
function checksum(source: Uint8Array, data: Uint8Array): number | undefined {
  try {
    const { memory, sum } = summer();
    // Both, each padded with zeros to a whole 32-byte block, one after the other.
    const at = (source.length + 31) & ~31;
    const end = at + ((data.length + 31) & ~31);
    const pages = Math.ceil(end / 65536) - memory.buffer.byteLength / 65536;
    if (pages > 0) memory.grow(pages);
    const view = new Uint8Array(memory.buffer, 0, end);
    view.set(source);
    view.fill(0, source.length, at);
    view.set(data, at);
    view.fill(0, at + data.length, end);
    return (sum(end) ^ Math.imul(source.length, 0x9e3779b1) ^ data.length) >>> 0;
  } catch {
    return undefined;
  }
}

/**
 * The summing function, compiled once per process from this module (162 bytes). Four words a
 * turn: V8 runs it as compiled at once (Liftoff), where a turn's overhead is most of its cost.
 *
 *   (module
 *     (memory (export "memory") 0)
 *     (func (export "sum") (param $end i32) (result i32) (local $i i32) (local $a i64) (local $b i64)
 *       (block $done
 *         (loop $block
 *           (br_if $done (i32.ge_u (local.get $i) (local.get $end)))
 *           ;; then for each offset 0, 8, 16, 24:
 *           (local.set $a (i64.add (local.get $a) (i64.load offset=0 (local.get $i))))
 *           (local.set $b (i64.add (local.get $b) (local.get $a)))
 *           (local.set $i (i32.add (local.get $i) (i32.const 32)))
 *           (br $block)))
 *       (local.set $a (i64.xor (local.get $a) (i64.rotl (local.get $b) (i64.const 32))))
 *       (i32.wrap_i64 (i64.xor (local.get $a) (i64.shr_u (local.get $a) (i64.const 32))))))
 */
const SUMMER =
  'AGFzbQEAAAABBgFgAX8BfwMCAQAFAwEAAAcQAgZtZW1vcnkCAANzdW0AAAp1AXMCAX8CfgJAA0AgASAATw0BIAIgASkDAHwhAiADIAJ8IQMgAiABKQMIfCECIAMgAnwhAyACIAEpAxB8IQIgAyACfCEDIAIgASkDGHwhAiADIAJ8IQMgAUEgaiEBDAALCyACIANCIImFIQIgAiACQiCIhacL';

/** What this module uses of WebAssembly (the project's TypeScript has no DOM or WebAssembly types). */
interface Summer {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  sum: (end: number) => number;
}
interface Wasm {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: unknown };
}

let compiled: Summer | undefined;

function summer(): Summer {
  if (compiled === undefined) {
    // Absent under `--jitless`: a TypeError, caught above.
    const wasm = (globalThis as unknown as { WebAssembly: Wasm }).WebAssembly;
    const module = new wasm.Module(Buffer.from(SUMMER, 'base64'));
    compiled = new wasm.Instance(module).exports as Summer;
  }
  return compiled;
}

/** `data`, V8's cache for `source`, with the seal `unseal` checks; throws where none can be made. */
export function seal(source: Buffer, data: Buffer): Buffer {
  const sum = checksum(source, data);
  if (sum === undefined) throw new Error('no checksum: WebAssembly cannot run here');
  const header = Buffer.alloc(HEADER);
  MAGIC.copy(header);
  header.writeUInt32BE(sum, MAGIC.length);
  return Buffer.concat([header, data]);
}

/** V8's cache from a sealed file, if the seal is whole and made for exactly this source. */
export function unseal(source: Buffer, file: Buffer): Buffer | undefined {
  if (file.length <= HEADER || !file.subarray(0, MAGIC.length).equals(MAGIC)) return undefined;
  const data = file.subarray(HEADER);
  const sum = checksum(source, data);
  return sum !== undefined && sum === file.readUInt32BE(MAGIC.length) ? data : undefined;
}
