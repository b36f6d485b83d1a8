/**
 * Host requests admitted but neither relayed nor answered yet (a call being checked, or held for
 * the roots or for the person's answer), by id key: what a host's cancellation stops.
 */

/** One pending request: its key and the signal its check watches. */
export interface PendingCall {
  key: string | undefined;
  signal: AbortSignal;
}

export class PendingCalls {
  private readonly byKey = new Map<string, { call: PendingCall; abort: AbortController }>();

  /** How many requests are pending. */
  get size(): number {
    return this.byKey.size;
  }

  /** Whether request `key` is pending (a second request under the same id is the host's error). */
  has(key: string | undefined): boolean {
    return key !== undefined && this.byKey.has(key);
  }

  /** Register a request; one without an id key (null id) cannot be cancelled, but is still checked. */
  start(key: string | undefined): PendingCall {
    const abort = new AbortController();
    const call = { key, signal: abort.signal };
    if (key !== undefined) this.byKey.set(key, { call, abort });
    return call;
  }

  /** The host cancelled `key`: true when it was pending (its check is aborted and it is forgotten). */
  cancel(key: string | undefined): boolean {
    const entry = key === undefined ? undefined : this.byKey.get(key);
    if (entry === undefined) return false;
    this.byKey.delete(key!);
    entry.abort.abort();
    return true;
  }

  /**
   * `call` was relayed or answered: it is no longer pending. Only that registration goes: after a
   * cancellation the host may already have reused the id for another request.
   */
  finish(call: PendingCall): void {
    if (call.key !== undefined && this.byKey.get(call.key)?.call === call) {
      this.byKey.delete(call.key);
    }
  }
}
