/** The requests a peer has sent and awaits answers to: pairing by id, time limits, and failing all at close. */
import { RootsError } from '../common/errors.js';

/** One request awaiting its answer, as handed back by `take`. */
export interface Awaited {
  method: string;
  resolve: (result: unknown) => void;
  reject: (err: Error) => void;
}

interface Entry extends Awaited {
  timer: NodeJS.Timeout | undefined;
}

/** Requests awaiting answers, keyed by their id (`Id`: a number for the daemon's wire, a string for the proxy's own). */
export class PendingRequests<Id> {
  private readonly entries = new Map<Id, Entry>();

  /** How many requests await an answer. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Await the answer to request `id`: the promise settles when `take` hands the entry to whoever
   * reads the answer, or rejects with a `TIMEOUT` error after `timeoutMs` (none when undefined or
   * `Infinity`), or when `rejectAll` runs.
   */
  wait(id: Id, method: string, timeoutMs: number | undefined): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const timer =
        timeoutMs === undefined || !Number.isFinite(timeoutMs)
          ? undefined
          : setTimeout(() => {
              this.entries.delete(id);
              reject(new RootsError('TIMEOUT', `${method}: no answer within ${timeoutMs} ms`));
            }, timeoutMs);
      this.entries.set(id, { method, resolve, reject, timer });
    });
  }

  /** The request `id` awaits, removed from the table with its timer stopped; undefined if none does. */
  take(id: Id): Awaited | undefined {
    const entry = this.entries.get(id);
    if (entry === undefined) return undefined;
    this.entries.delete(id);
    if (entry.timer !== undefined) clearTimeout(entry.timer);
    return entry;
  }

  /** Reject every request still waiting (the connection closed): nothing will answer them now. */
  rejectAll(error: (method: string) => Error): void {
    for (const id of [...this.entries.keys()]) {
      const entry = this.take(id);
      entry?.reject(error(entry.method));
    }
  }
}
