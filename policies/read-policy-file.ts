/** Reading one policy file's bytes (the main file, an include, the grants file). */
import { constants, promises as fsp } from 'node:fs';
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
  // O_NOCTTY: a link to a terminal must not become the daemon's controlling terminal (a session
  // leader's first open of one does), through which ^C on it would stop the daemon.
  const handle = await fsp.open(
    path,
    constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY,
  );
  try {
    const st = await handle.stat({ bigint: true });
    if (st.isDirectory()) throw codeError(`${path} is a directory`, 'EISDIR');
    if (!st.isFile()) throw codeError(`${path} is not a regular file`, 'ENOTREG');
    if (st.size > MAX_POLICY_BYTES) {
      throw Object.assign(codeError(`${path} is over the size limit`, 'EFBIG'), {
        size: Number(st.size),
      });
    }
    // Read to the end, as the file is now (it may have grown since the stat), but never more
    // than one byte past the limit, which the parser then reports.
    let buf = Buffer.allocUnsafe(Math.min(Number(st.size), MAX_POLICY_BYTES) + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buf, length, buf.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length < buf.length) continue;
      if (buf.length > MAX_POLICY_BYTES) break;
      const grown = Buffer.allocUnsafe(Math.min(buf.length * 2, MAX_POLICY_BYTES + 1));
      buf.copy(grown, 0, 0, length);
      buf = grown;
    }
    return {
      bytes: buf.subarray(0, length),
      id: `${st.dev}:${st.ino}`,
      real: await descriptorPath(handle.fd, path),
    };
  } finally {
    await handle.close();
  }
}

/**
 * The path the kernel gives an open descriptor; without one (no /proc, or the file removed since:
 * "/x (deleted)"), the canonical path of `name` now, or `name` itself.
 */
async function descriptorPath(fd: number, name: string): Promise<string> {
  const real = await fsp.readlink(`/proc/self/fd/${fd}`).catch(() => '');
  if (real.startsWith('/') && !real.endsWith(' (deleted)')) return real;
  return fsp.realpath(name).catch(() => name);
}

function codeError(message: string, code: string): Error {
  return Object.assign(new Error(message), { code });
}
