/**
 * Opening a decision log file for `rootsctl log`, and the limits of what it reads.
 *
 * The path may come from a daemon's `daemon/status` (`log --socket`): any process that answers
 * on the socket the person named, a stale one or a fake one. So the file is opened the way the
 * daemon writes it and refused otherwise (deny by default), each refusal saying what and where:
 * - never through a symbolic link at the end (the daemon opens its log with O_NOFOLLOW);
 * - without blocking (O_NONBLOCK), then only a regular file is read: a FIFO would block the open
 *   or the read forever, /dev/zero or /dev/urandom never end, a directory cannot be read;
 * - only a file of the person's own that not everyone may write (the daemon keeps it 0600):
 *   entries another user could write are not the daemon's decisions. Group write is let be: with
 *   a user's private group (umask 002) a copied or hand-made log is 0664, and the group is theirs.
 * And it is read only up to its size when opened, and at most `MAX_LOG_READ_BYTES` in all.
 */
import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import { errnoCode, RootsError } from '../common/errors.js';
import { clipped, visibleText } from './terminal-text.js';

/**
 * The most `log` reads of the log and its rotated copies together, newest first. The daemon's
 * default keeps 10 MiB and 3 rotated copies (40 MiB); a bigger log is shown from its newest 64
 * MiB, which bounds memory whatever the files hold (a sparse file, one that keeps growing).
 */
export const MAX_LOG_READ_BYTES = 64 * 1024 * 1024;

/** The most `--follow` reads in one go; a longer stretch is read in pieces. */
export const FOLLOW_CHUNK_BYTES = 1024 * 1024;

const FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | constants.O_NOCTTY;

/** A path for a message: escaped, and cut if very long. */
export function shownPath(path: string): string {
  return visibleText(clipped(path));
}

/** An open log file, its identity and size when opened. */
export interface OpenLog {
  handle: FileHandle;
  ino: number;
  size: number;
}

/**
 * `path` opened for reading, or undefined when nothing is there; throws a RootsError saying
 * why for anything `log` does not read.
 */
export async function openLog(
  path: string,
  uid = process.getuid?.(),
): Promise<OpenLog | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, FLAGS);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT') return undefined;
    throw openError(path, code);
  }
  try {
    const st = await handle.stat();
    const refusal = !st.isFile()
      ? `is ${kindOf(st)}, not a regular file; mcp-rootsd writes its decision log as a regular file`
      : uid !== undefined && st.uid !== uid
        ? `belongs to user id ${st.uid}, not to you (${uid}); mcp-rootsd writes its decision log as you`
        : (st.mode & 0o002) !== 0
          ? `may be written by every user (mode ${(st.mode & 0o777).toString(8)}); mcp-rootsd keeps its decision log 0600, so entries in this one could be anyone's`
          : undefined;
    if (refusal !== undefined) {
      throw new RootsError(
        'PATH_INVALID',
        `${shownPath(path)} ${refusal}. Not read: check what named this file (--state-dir, or the daemon on --socket).`,
      );
    }
    return { handle, ino: st.ino, size: st.size };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/** Bytes `[start, end)` of an open file; fewer if it shrank meanwhile. */
export async function readRange(handle: FileHandle, start: number, end: number): Promise<Buffer> {
  const buf = Buffer.alloc(Math.max(0, end - start));
  let got = 0;
  while (got < buf.length) {
    const { bytesRead } = await handle.read(buf, got, buf.length - got, start + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return buf.subarray(0, got);
}

function openError(path: string, code: string | undefined): RootsError {
  const what =
    code === 'ELOOP'
      ? 'is a symbolic link; mcp-rootsd never writes its decision log through one'
      : code === 'EACCES' || code === 'EPERM'
        ? 'cannot be read: permission denied'
        : code === 'ENXIO'
          ? 'is a socket or a device with nothing behind it, not a regular file'
          : `cannot be opened (${code ?? 'unknown error'})`;
  return new RootsError(
    'PATH_INVALID',
    `${shownPath(path)} ${what}. Not read: check what named this file (--state-dir, or the daemon on --socket).`,
  );
}

function kindOf(st: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isSocket(): boolean;
}): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a file';
}
