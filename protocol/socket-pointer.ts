/**
 * The pointer file: the daemon writes its socket path into its state directory, under the user's
 * home, so that a client started without the environment that chose the socket (a host that
 * starts servers without XDG_RUNTIME_DIR) still finds it. Clients trust the pointer only as far as
 * they trust the socket directory: owned by them and writable by nobody else.
 */
import { promises as fsp, type Stats } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { errnoCode, ignoreMissing, RootsError } from '../common/errors.js';
import { shellQuote } from '../common/shell-quote.js';
import { checkOwned } from './owned-path.js';
import { asyncLookups, type SocketLookups } from './socket-lookups.js';
import { MAX_SOCKET_PATH_BYTES } from './socket-path.js';
import { crypto } from '../common/lazy-crypto.js';

/** The pointer's name inside the state directory. */
export const POINTER_NAME = 'socket-path';

/** The pointer file for a state directory. */
export function pointerFile(stateDir: string): string {
  return join(stateDir, POINTER_NAME);
}

/** For the daemon: make `stateDir/socket-path` name `socketPath`, atomically, mode 0600. */
export async function writeSocketPointer(stateDir: string, socketPath: string): Promise<void> {
  await fsp.mkdir(stateDir, { recursive: true, mode: 0o700 });
  const file = pointerFile(stateDir);
  // Written whole under a private name, then renamed: a client never reads half a path.
  const temp = `${file}.${process.pid}.${crypto().randomBytes(4).toString('hex')}`;
  try {
    await fsp.writeFile(temp, `${socketPath}\n`, { mode: 0o600, flag: 'wx' });
    await fsp.rename(temp, file);
  } finally {
    await ignoreMissing(fsp.unlink(temp));
  }
}

/**
 * For the daemon, when it stops: remove the pointer if it still names `socketPath` (another
 * daemon sharing the state directory may have written its own since).
 */
export async function removeSocketPointer(stateDir: string, socketPath: string): Promise<void> {
  const file = pointerFile(stateDir);
  const text = await ignoreMissing(fsp.readFile(file, 'utf8'));
  if (text !== undefined && text.trim() === socketPath) await ignoreMissing(fsp.unlink(file));
}

/** The pointer's and its directory's check: the user's own, writable by nobody else. */
function checkOwnedByUser(path: string, st: Stats, uid: number, kind: 'file' | 'directory'): void {
  checkOwned(path, st, uid, {
    kind,
    chmod: 'go-w',
    unsafe: (what, fix) =>
      new RootsError(
        'SOCKET_DIR_UNSAFE',
        `the daemon's pointer ${path} is unsafe: ${what}, so another local user could point you at a fake daemon. ${fix}, or pass --socket (or set MCP_ROOTS_SOCKET).`,
        { hint: fix },
      ),
  });
}

/**
 * For clients: the socket path the pointer in `stateDir` names, or undefined when there is no
 * pointer. Throws `SOCKET_DIR_UNSAFE` unless the state directory and the pointer are owned by
 * `uid` and writable by nobody else, and the pointer holds one absolute socket path.
 * `lookups`: blocking calls for a one-shot command (socket-lookups.ts).
 */
export async function readSocketPointer(
  stateDir: string,
  uid: number,
  lookups: SocketLookups = asyncLookups,
): Promise<string | undefined> {
  const dirStats = await ignoreMissing(lookups.lstat(stateDir));
  if (dirStats === undefined) return undefined;
  checkOwnedByUser(stateDir, dirStats, uid, 'directory');
  const file = pointerFile(stateDir);
  const st = await ignoreMissing(lookups.lstat(file));
  if (st === undefined) return undefined;
  checkOwnedByUser(file, st, uid, 'file');
  let text: string;
  try {
    // Checked above, in a directory no one else can write: it cannot be swapped in between.
    text = await lookups.readFile(file);
  } catch (err) {
    throw new RootsError(
      'SOCKET_DIR_UNSAFE',
      `cannot read the daemon's pointer ${file} (${errnoCode(err) ?? String(err)}). Remove it, or pass --socket.`,
      { cause: err },
    );
  }
  const path = text.endsWith('\n') ? text.slice(0, -1) : text;
  if (!isAbsolute(path) || /[\0\n]/.test(path) || Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
    throw new RootsError(
      'SOCKET_DIR_UNSAFE',
      `the daemon's pointer ${file} does not hold one absolute socket path. Remove it (rm ${shellQuote(file)}); mcp-rootsd writes a new one when it starts.`,
    );
  }
  return path;
}
