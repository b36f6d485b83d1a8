/** Getting the daemon's listening socket: one daemon per path, stale files replaced, systemd's fd used. */
import { chmod, lstat, rename, stat, unlink } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { errnoCode, ignoreMissing, RootsError } from '../common/errors.js';
import { JsonRpcConnection } from '../protocol/connection.js';
import {
  checkSocketPathLength,
  ensureSocketDir,
  MAX_SOCKET_PATH_BYTES,
} from '../protocol/socket-path.js';
import { listenOn } from './server-listen.js';
import { takeLock } from './single-lock.js';

/** The socket the daemon listens on, and what it must undo when it stops. */
export interface Listener {
  server: Server;
  path: string;
  /** True when systemd passed the socket in: never unlink it. */
  activated: boolean;
  /** Start accepting (after the owner has attached its connection handler). */
  listen(): Promise<void>;
  close(): Promise<void>;
}

const SD_LISTEN_FDS_START = 3;

/** systemd socket activation: the inherited listening descriptor, if it is meant for us. */
export function activationFd(
  env: Record<string, string | undefined>,
  pid: number,
): number | undefined {
  if (env.LISTEN_PID === undefined || Number(env.LISTEN_PID) !== pid) return undefined;
  const count = Number(env.LISTEN_FDS ?? '0');
  return Number.isInteger(count) && count >= 1 ? SD_LISTEN_FDS_START : undefined;
}

/** Ask whoever answers on `path` for its pid; undefined when nobody does (a stale file). */
async function livePid(path: string): Promise<number | 'unknown' | undefined> {
  let socket: Socket;
  try {
    socket = await new Promise<Socket>((resolve, reject) => {
      const s = createConnection({ path });
      s.once('connect', () => resolve(s));
      s.once('error', reject);
    });
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ECONNREFUSED' || code === 'ENOENT') return undefined;
    return 'unknown';
  }
  const conn = new JsonRpcConnection(socket, socket);
  try {
    const status = await conn.request('daemon/status', {}, { timeoutMs: 2000 });
    return status.pid;
  } catch {
    return 'unknown';
  } finally {
    await conn.close();
  }
}

/**
 * Listen on `path` as the only daemon for it. Holds the single-daemon lock first
 * (single-lock.ts), so two daemons starting at once cannot both win; a live daemon makes this
 * fail with "already running (pid N)"; a stale socket file is replaced.
 */
export async function acquireListener(
  path: string,
  opts: {
    env: Record<string, string | undefined>;
    uid: number;
    pid: number;
    /** Told of each lock name passed over because something else held it (single-lock.ts). */
    warn?: (message: string) => void;
  },
): Promise<Listener> {
  const fd = activationFd(opts.env, opts.pid);
  if (fd !== undefined) {
    const server = createServer({ allowHalfOpen: true });
    return {
      server,
      path,
      activated: true,
      listen: () => listenOn(server, { fd }),
      close: () => closeServer(server),
    };
  }

  checkSocketPathLength(path);
  await ensureSocketDir(dirname(path), opts.uid);

  const taken = await takeLock(path, opts.uid, dirname(path));
  if ('running' in taken) {
    const pid = await livePid(path);
    throw new RootsError(
      'DAEMON_RUNNING',
      typeof pid === 'number'
        ? `mcp-rootsd is already running (pid ${pid}) on ${path}.`
        : `another mcp-rootsd holds ${path} (it is starting or not answering). Stop it first, or choose another --socket.`,
    );
  }
  const lock = taken.server;
  for (const why of taken.passedOver)
    opts.warn?.(`the single-daemon lock for ${path}: ${why}; took the next`);

  try {
    const existing = await ignoreMissing(lstat(path));
    if (existing) {
      const pid = await livePid(path);
      if (pid !== undefined) {
        throw new RootsError(
          'DAEMON_RUNNING',
          typeof pid === 'number'
            ? `mcp-rootsd is already running (pid ${pid}) on ${path}.`
            : `something is already listening on ${path}. Stop it first, or choose another --socket.`,
        );
      }
      if (!existing.isSocket()) {
        throw new RootsError(
          'SOCKET_DIR_UNSAFE',
          `${path} exists and is not a socket; move it away or choose another --socket.`,
        );
      }
      await ignoreMissing(unlink(path)); // stale: its daemon is gone (connect refused)
    }
    // Half-open: a client that sends its request and then EOF (socat, nc) still gets the answer.
    const server = createServer({ allowHalfOpen: true });
    let ino: number | undefined;
    const start = async () => {
      // Node unlinks the path it listened on when it closes, by name. Listening on a private
      // name and renaming it into place means closing can never remove another instance's socket.
      const temp = join(dirname(path), `.rootsd-${opts.pid}`);
      // Bound at its own path, the socket is there before it listens, and a client in between is
      // refused: only a temp name too long for a socket is a reason to (a CI run, once).
      const direct = Buffer.byteLength(temp) > MAX_SOCKET_PATH_BYTES;
      // No moment in which the socket is reachable with wider permissions than 0600.
      const oldMask = process.umask(0o177);
      try {
        if (!direct) await ignoreMissing(unlink(temp));
        await listenOn(server, direct ? path : temp);
      } finally {
        process.umask(oldMask);
      }
      await chmod(direct ? path : temp, 0o600);
      if (!direct) await rename(temp, path);
      ino = (await stat(path)).ino;
    };
    let closing: Promise<void> | undefined;
    const close = () =>
      (closing ??= (async () => {
        await closeServer(server);
        // Never unlink a socket another instance now owns: only the inode we created.
        const now = await ignoreMissing(stat(path));
        if (now && ino !== undefined && now.ino === ino) await ignoreMissing(unlink(path));
        await closeServer(lock);
      })());
    return { server, path, activated: false, listen: start, close };
  } catch (err) {
    await closeServer(lock);
    throw err;
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    if (!server.listening) resolve();
    else server.close(() => resolve());
  });
}
