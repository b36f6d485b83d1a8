/** Host requests relayed to the server and not yet answered, so that none is left waiting when the server dies. */
import { errorLine, idKey } from '../protocol/messages.js';
import { RpcCode } from '../protocol/rpc-errors.js';
import type { ProxyLogger } from './log.js';

/** Why a request got no answer from the server. */
export const SERVER_GONE = 'the MCP server exited or closed its output (see the proxy’s stderr)';

/**
 * Requests that stay open for the whole session (a 2026-07-28 subscription stream): they are not
 * calls a restart waits for, since they never finish; a restarted server gets them again.
 */
const STREAMS = new Set(['subscriptions/listen']);

/** The host's requests on their way to or at the server, by id key. */
export class RelayedRequests {
  private readonly waiting = new Map<string, { idText: string; method: string }>();
  private emptied: (() => void)[] = [];

  /** `onSettled`: told of each request answered, cancelled or failed. */
  constructor(private readonly onSettled: (key: string) => void = () => {}) {}

  /** How many requests await the server's answer (open subscription streams aside). */
  get size(): number {
    let n = 0;
    for (const w of this.waiting.values()) if (!STREAMS.has(w.method)) n++;
    return n;
  }

  /** Resolves once no request awaits an answer (at once when none does; streams aside). */
  whenEmpty(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.emptied.push(resolve));
  }

  /** Remember a request sent to the server (one with a null id cannot be answered and is not). */
  track(idText: string | undefined, method: string): void {
    const key = idKey(idText);
    if (idText !== undefined && key !== undefined) this.waiting.set(key, { idText, method });
  }

  /** Whether request `key` went to the server and has not been answered or cancelled. */
  has(key: string): boolean {
    return this.waiting.has(key);
  }

  /** The server answered request `key`, or the host cancelled it. */
  settled(key: string): void {
    this.waiting.delete(key);
    this.onSettled(key);
    if (this.size === 0) this.wake();
  }

  private wake(): void {
    const waiters = this.emptied;
    this.emptied = [];
    for (const w of waiters) w();
  }

  /** The server is gone: answer every request still waiting with an error, through `toHost`. */
  failAll(toHost: (line: string) => void, log: ProxyLogger, why: string = SERVER_GONE): void {
    for (const [key, { idText, method }] of this.waiting) {
      this.onSettled(key);
      log.warn(`the server went away before answering ${method}; answered with an error`);
      toHost(
        errorLine(idText, {
          code: RpcCode.INTERNAL_ERROR,
          message: `mcp-roots-proxy: no answer to ${method}: ${why}`,
        }),
      );
    }
    this.waiting.clear();
    this.wake();
  }
}
