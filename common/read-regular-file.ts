/**
 * A small file read only when it is a regular file. Opened without blocking and never as a
 * controlling terminal: a FIFO left where a file is looked for (a package.json in npx's cache, an
 * `.npmrc`, an env file) would hold the reader until someone writes to it, and a blocked open
 * holds a thread of libuv's pool that not even `process.exit` frees.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';

const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

/** The text of `path`, or undefined when it is missing, not a regular file, or over `max` bytes. */
export async function readRegularFile(path: string, max: number): Promise<string | undefined> {
  const fh = await open(path, FLAGS).catch(() => undefined);
  if (fh === undefined) return undefined;
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.size > max) return undefined;
    return await fh.readFile('utf8');
  } catch {
    return undefined;
  } finally {
    await fh.close();
  }
}

/**
 * `readRegularFile` where the caller cannot wait (a watch's event, judged in its turn), and
 * without following a link at the last name: what a sandboxed server wrote there is read as the
 * file it is, never where a link it made leads.
 */
export function readRegularFileSync(path: string, max: number): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, FLAGS | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.size > max) return undefined;
    const buf = Buffer.alloc(st.size);
    return buf.subarray(0, readSync(fd, buf, 0, st.size, 0)).toString('utf8');
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}
