/** Reading one policy file's bytes (the main file, an include, the grants file). */
import {
  closeSync,
  constants,
  fstatSync,
  promises as fsp,
  openSync,
  readlinkSync,
  readSync,
  realpathSync,
  type BigIntStats,
} from 'node:fs';
import type { PolicyFileRead } from './model.js';
import { MAX_POLICY_BYTES } from './parse.js';

/**
 * The bytes of the regular file at `path` (links followed), refusing anything else and anything
 * over the size a policy file may have: a FIFO there (an include swapped for one, or a glob include
 * matching one) would hold the read, and one of libuv's four threads, forever; a device such as
 * /dev/zero would fill the daemon's memory. The FIFO is opened without waiting for a writer.
 * Errors carry a `code`: the system's, `ENOTREG` for what is not a regular file, `EFBIG` (with
 * `size`) for a file over the limit.
 */
export async function readPolicyFile(path: string): Promise<Buffer> {
  return (await openPolicyFile(path)).bytes;
}

/** As `readPolicyFile`, with the identity and canonical name of the file read, from its one open. */
export async function openPolicyFile(path: string): Promise<PolicyFileRead> {
  const handle = await fsp.open(path, OPEN_FLAGS);
  try {
    const st = await handle.stat({ bigint: true });
    const reader = new Reader(path, st);
    while (reader.wants()) {
      const into = reader.into();
      reader.got((await handle.read(into)).bytesRead, into.length);
    }
    return reader.done(await descriptorPath(handle.fd, path));
  } finally {
    // Not waited for: the bytes are in hand, and closing a descriptor only read from cannot
    // fail in a way that changes them. Each wait is a round trip through libuv's thread pool,
    // which on a busy machine is where a reload's time went (bench/FINDINGS.md, thirteenth step).
    handle.close().catch(() => undefined);
  }
}

/**
 * As `openPolicyFile`, with blocking calls: for a process that reads its policy once and has
 * nothing else to do meanwhile (rootsctl's offline evaluation, `policies/fs.ts` `nodeFsSync`).
 * The same open, the same checks, the same bytes.
 */
export function openPolicyFileSync(path: string): PolicyFileRead {
  const fd = openSync(path, OPEN_FLAGS);
  try {
    const reader = new Reader(path, fstatSync(fd, { bigint: true }));
    while (reader.wants()) {
      const { buffer, offset, length, position } = reader.into();
      reader.got(readSync(fd, buffer, offset, length, position), length);
    }
    return reader.done(descriptorPathSync(fd, path));
  } finally {
    closeSync(fd);
  }
}

// O_NOCTTY: a link to a terminal must not become the daemon's controlling terminal (a session
// leader's first open of one does), through which ^C on it would stop the daemon. O_NONBLOCK: a
// FIFO opens without waiting for a writer (and is then refused as not a regular file).
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/**
 * One read of an opened policy file: refuses what is not a regular file or is over the limit
 * (from its `fstat`), then takes the file to its end, as it is now (it may have grown since the
 * stat), but never more than one byte past the limit, which the parser then reports.
 */
class Reader {
  private buf: Buffer;
  private length = 0;
  private ended = false;

  constructor(
    path: string,
    private readonly st: BigIntStats,
  ) {
    if (st.isDirectory()) throw codeError(`${path} is a directory`, 'EISDIR');
    if (!st.isFile()) throw codeError(`${path} is not a regular file`, 'ENOTREG');
    if (st.size > MAX_POLICY_BYTES) {
      throw Object.assign(codeError(`${path} is over the size limit`, 'EFBIG'), {
        size: Number(st.size),
      });
    }
    this.buf = Buffer.allocUnsafe(Math.min(Number(st.size), MAX_POLICY_BYTES) + 1);
  }

  /** Whether to read again. */
  wants(): boolean {
    if (this.ended) return false;
    if (this.length < this.buf.length) return true;
    if (this.buf.length > MAX_POLICY_BYTES) return false;
    const grown = Buffer.allocUnsafe(Math.min(this.buf.length * 2, MAX_POLICY_BYTES + 1));
    this.buf.copy(grown, 0, 0, this.length);
    this.buf = grown;
    return true;
  }

  /** Where the next read goes. */
  into(): { buffer: Buffer; offset: number; length: number; position: number } {
    const at = this.length;
    return { buffer: this.buf, offset: at, length: this.buf.length - at, position: at };
  }

  /**
   * What the last read gave, of `asked` bytes. A regular file's read comes back short at its end,
   * so a short read once the size the stat saw is in hand ends it: no second read to see the end
   * (the buffer is one byte longer than the file was, so a file read whole comes back short). A
   * short read before that size (a FUSE or network file system may give one) reads on: ending
   * there would load a policy cut short, which may have lost a deny and still parse.
   */
  got(bytesRead: number, asked: number): void {
    this.length += bytesRead;
    if (bytesRead === 0 || (bytesRead < asked && this.length >= Number(this.st.size)))
      this.ended = true;
  }

  done(real: string): PolicyFileRead {
    return {
      bytes: this.buf.subarray(0, this.length),
      id: `${this.st.dev}:${this.st.ino}`,
      real,
    };
  }
}

/**
 * The path the kernel gives an open descriptor; without one (no /proc, or the file removed since:
 * "/x (deleted)"), the canonical path of `name` now, or `name` itself.
 */
async function descriptorPath(fd: number, name: string): Promise<string> {
  // Asked directly: /proc answers from the kernel's memory, never from a disk or a mount that
  // may hang, so the thread pool's round trip would be all of its cost.
  let real = '';
  try {
    real = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    // no /proc: the name's canonical path below
  }
  if (real.startsWith('/') && !real.endsWith(' (deleted)')) return real;
  return fsp.realpath(name).catch(() => name);
}

/** As `descriptorPath`, with blocking calls. */
function descriptorPathSync(fd: number, name: string): string {
  let real = '';
  try {
    real = readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    // no /proc: the name's canonical path below
  }
  if (real.startsWith('/') && !real.endsWith(' (deleted)')) return real;
  try {
    return realpathSync.native(name);
  } catch {
    return name;
  }
}

function codeError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}
