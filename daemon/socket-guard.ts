/** Notice when the socket (or its directory) disappears under a running daemon, and put it back. */
import { watch, type FSWatcher } from 'node:fs';
import { chmod, lstat, rename, unlink } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import type { Logger } from './logger.js';
import { errnoCode, ignoreMissing, RootsError } from '../common/errors.js';
import { ensureSocketDir, MAX_SOCKET_PATH_BYTES } from '../protocol/socket-path.js';
import type { Listener } from './listen.js';
import { listenOn } from './server-listen.js';

/** How often the socket path is looked at besides the directory's events (a missed event, a watch that failed). */
export const SOCKET_CHECK_MS = 300_000;

/** How long after the directory's last event the socket is looked at. */
const SETTLE_MS = 100;

/** How many failed attempts to recreate the socket before the daemon gives up and exits. */
const MAX_FAILURES = 5;

export interface SocketGuardOptions {
  listener: Listener;
  uid: number;
  pid: number;
  log: Logger;
  /** Fallback check interval; the daemon passes its rescan interval, so idle stays idle. */
  intervalMs?: number;
}

/**
 * Checks the socket path on a timer. A removed socket or directory (a tmp cleaner, `rm -r` of
 * `/tmp/mcp-roots-<uid>`) is recreated, with the same checks as at start-up, and its connections
 * are handed to the daemon's server. When that is impossible (the directory now belongs to someone
 * else, or another file took the path) `lost` resolves, so the daemon can exit loudly instead of
 * serving on nothing.
 */
export class SocketGuard {
  /** Resolves with the reason once the socket cannot be served any more; never rejects. */
  readonly lost: Promise<RootsError>;
  private lose!: (err: RootsError) => void;
  private readonly timer: NodeJS.Timeout | undefined;
  private ino: number | undefined;
  private busy = false;
  private again = false;
  private failures = 0;
  private pending: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;
  private readonly extra: Server[] = [];
  private watcher: FSWatcher | undefined;

  constructor(private readonly o: SocketGuardOptions) {
    this.lost = new Promise((resolve) => (this.lose = resolve));
    // Under socket activation systemd owns the path; there is nothing to guard.
    if (o.listener.activated) return;
    this.timer = setInterval(() => void this.tick(), o.intervalMs ?? SOCKET_CHECK_MS);
    this.timer.unref();
  }

  /** Remember the inode now in place (call once the listener is listening). */
  async start(): Promise<void> {
    if (!this.timer) return;
    this.ino = (await lstat(this.o.listener.path)).ino;
    this.watchDir();
  }

  /** Events on the socket's directory (an entry removed, the directory itself gone) trigger a check. */
  private watchDir(): void {
    this.watcher?.close();
    this.watcher = undefined;
    if (this.closing) return;
    try {
      const w = watch(dirname(this.o.listener.path), { persistent: false }, () => this.soon());
      // A removed directory ends the watch: check (the check re-watches once it is back).
      w.on('error', () => this.soon());
      this.watcher = w;
    } catch {
      // The directory is already gone: the check recreates it, or the timer tries later.
      this.soon();
    }
  }

  /**
   * Check a moment after the last event: a `rm -r` of the directory is a burst of events, and
   * recreating the socket in the middle of it would race the removal.
   */
  private soon(delayMs = SETTLE_MS): void {
    if (this.closing) return;
    if (this.pending) clearTimeout(this.pending);
    this.pending = setTimeout(() => {
      this.pending = undefined;
      void this.tick();
    }, delayMs);
    this.pending.unref();
  }

  private async tick(): Promise<void> {
    if (this.closing || this.ino === undefined) return;
    if (this.busy) {
      // An event during a check: look again once it is done.
      this.again = true;
      return;
    }
    this.busy = true;
    this.again = false;
    const { path } = this.o.listener;
    try {
      const st = await ignoreMissing(lstat(path));
      if (st?.ino === this.ino) return;
      if (st !== undefined) {
        throw new RootsError(
          'SOCKET_DIR_UNSAFE',
          `${path} was replaced by another file; this mcp-rootsd no longer serves it`,
        );
      }
      this.o.log.warn(`the socket ${path} disappeared (its directory was removed?); recreating it`);
      await this.relisten();
      this.failures = 0;
      this.watchDir();
      this.o.log.info(`listening on ${path} again`);
    } catch (err) {
      if (!(err instanceof RootsError) && ++this.failures < MAX_FAILURES) {
        // Something else was changing the directory at the same moment: look again shortly.
        this.o.log.warn(`cannot recreate ${path} yet (${errnoCode(err) ?? String(err)}); retrying`);
        this.soon(SETTLE_MS * 2 ** this.failures);
        return;
      }
      const e =
        err instanceof RootsError
          ? err
          : new RootsError(
              'INTERNAL',
              `cannot recreate ${path} (${errnoCode(err) ?? String(err)})`,
            );
      this.o.log.error(`${e.message}; stopping`);
      clearInterval(this.timer);
      this.watcher?.close();
      if (this.pending) clearTimeout(this.pending);
      this.lose(e);
    } finally {
      this.busy = false;
      if (this.again) void this.tick();
    }
  }

  private async relisten(): Promise<void> {
    const { listener, uid, pid } = this.o;
    await ensureSocketDir(dirname(listener.path), uid);
    const server = createServer({ allowHalfOpen: true });
    server.on('connection', (socket) => listener.server.emit('connection', socket));
    this.extra.push(server);
    // As at start-up: a private name at 0600, renamed into place.
    const temp = join(dirname(listener.path), `.rootsd-${pid}`);
    const direct = Buffer.byteLength(temp) > MAX_SOCKET_PATH_BYTES;
    const target = direct ? listener.path : temp;
    const oldMask = process.umask(0o177);
    try {
      await ignoreMissing(unlink(temp));
      await listenOn(server, target);
    } finally {
      process.umask(oldMask);
    }
    if (this.closing) {
      // The daemon began to stop while this socket was being made: it must not outlive it.
      await new Promise<void>((resolve) => server.close(() => resolve()));
      return;
    }
    try {
      await chmod(target, 0o600);
      if (!direct) await rename(temp, listener.path);
      this.ino = (await lstat(listener.path)).ino;
    } catch (err) {
      // Half made (the directory changed under us): close it, so a retry starts clean.
      this.extra.splice(this.extra.indexOf(server), 1);
      await new Promise<void>((resolve) => server.close(() => resolve()));
      throw err;
    }
  }

  /** Stop checking; close recreated sockets and remove the path if it is still ours. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.timer);
      this.watcher?.close();
      if (this.pending) clearTimeout(this.pending);
      const mine = this.extra.length > 0 ? this.ino : undefined;
      await Promise.all(
        this.extra.map(
          (s) =>
            new Promise<void>((resolve) => (s.listening ? s.close(() => resolve()) : resolve())),
        ),
      );
      const now = await ignoreMissing(lstat(this.o.listener.path));
      if (mine !== undefined && now?.ino === mine)
        await ignoreMissing(unlink(this.o.listener.path));
    })();
    return this.closing;
  }
}
