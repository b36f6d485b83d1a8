/**
 * A connection to mcp-rootsd that comes back: connect, and after a failure or a lost connection
 * try again with exponential backoff until closed. The proxy's daemon link and `rootsctl watch`
 * both follow a daemon across restarts with it; what to do on each new connection is theirs.
 */
import { EventEmitter } from 'node:events';
import { RootsError } from '../common/errors.js';
import type { RootsClient } from './client.js';

/** Options for `Reconnector`. */
export interface ReconnectorOptions {
  /** Make one connection (typically `RootsClient.connect` with fixed options). */
  connect: () => Promise<RootsClient>;
  /** First and longest wait between attempts; the wait doubles after each failure. */
  backoffMs: { min: number; max: number };
  /** Whether a failed connect is worth retrying (default: every failure is). */
  retryable?: (err: unknown) => boolean;
}

/** Events of `Reconnector`. */
export interface ReconnectorEvents {
  /** A new connection is up; set up subscriptions on it. */
  connected: [client: RootsClient];
  /** The current connection closed (the daemon stopped or restarted). */
  disconnected: [client: RootsClient, reason: string];
  /** An attempt failed or a connection was lost; the next attempt is in `delayMs`. */
  retrying: [err: unknown, attempt: number, delayMs: number];
  /** A failure `retryable` refused: no more attempts. */
  gaveUp: [err: unknown];
}

/** Keeps one connection to the daemon, reconnecting with backoff until `close()`. */
export class Reconnector extends EventEmitter<ReconnectorEvents> {
  private current: RootsClient | undefined;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private closePromise: Promise<void> | undefined;

  constructor(private readonly options: ReconnectorOptions) {
    super();
  }

  /** The connection now, or undefined between connections. */
  get client(): RootsClient | undefined {
    return this.current;
  }

  /** Start; with `initial`, begin from a connection the caller already made. */
  start(initial?: RootsClient): this {
    if (initial === undefined) void this.connect();
    else this.adopt(initial);
    return this;
  }

  /** The connection proved good (it answered): the next loss waits the shortest time again. */
  resetBackoff(): void {
    this.attempt = 0;
  }

  /** Stop reconnecting and close the connection; the same promise every time. */
  close(): Promise<void> {
    this.closePromise ??= (async () => {
      this.closed = true;
      if (this.timer !== undefined) clearTimeout(this.timer);
      await this.current?.close();
    })();
    return this.closePromise;
  }

  private async connect(): Promise<void> {
    this.timer = undefined;
    if (this.closed) return;
    let client: RootsClient;
    try {
      client = await this.options.connect();
    } catch (err) {
      if (this.options.retryable?.(err) === false) {
        if (!this.closed) this.emit('gaveUp', err);
        return;
      }
      this.retry(err);
      return;
    }
    if (this.closed) {
      await client.close();
      return;
    }
    this.adopt(client);
  }

  private adopt(client: RootsClient): void {
    this.current = client;
    const lost = (reason: string): void => {
      if (this.current !== client) return;
      this.current = undefined;
      if (this.closed) return;
      this.emit('disconnected', client, reason);
      this.retry(new RootsError('DAEMON_UNREACHABLE', reason));
    };
    if (client.closed) {
      lost('closed before it was used');
      return;
    }
    client.once('close', lost);
    this.emit('connected', client);
  }

  private retry(err: unknown): void {
    if (this.closed) return;
    const { min, max } = this.options.backoffMs;
    const delay = Math.min(max, min * 2 ** this.attempt);
    this.emit('retrying', err, this.attempt, delay);
    this.attempt++;
    this.timer = setTimeout(() => void this.connect(), delay);
  }
}
