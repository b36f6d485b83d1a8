/**
 * Tool calls that write a path naming one of git's names run one at a time, from their check to
 * the server's answer. The daemon refuses the write that would complete a git directory with
 * code in it (policies/git-dir.ts) by looking at what is on disk; calls checked side by side
 * would each be judged without the others' names (`config` with `objects` and `refs` in flight
 * beside it), and all of them allowed. One at a time, each check sees what the ones before made.
 */
import { untilCancelled } from './abortable.js';
import type { ProxyLogger } from './log.js';

/**
 * The longest a write waits for the ones before: a server that never answers one (or a release
 * this class was never told of) must not stop every later write naming git's names.
 */
const WAIT_LIMIT_MS = 30_000;

export class GitWrites {
  constructor(private readonly log: ProxyLogger) {}

  /** Settles once every write let in so far has been answered. */
  private tail: Promise<void> = Promise.resolve();
  /** The writes let in and not yet done, by request key: each one's release. */
  private readonly held = new Map<string, () => void>();

  /** Wait until the writes before `key` are done (call `done(key)` when this one is, in any case). */
  async enter(key: string, signal: AbortSignal | undefined): Promise<void> {
    const before = this.tail;
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    this.tail = before.then(() => mine);
    this.held.set(key, release);
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<'limit'>((resolve) => {
      timer = setTimeout(() => resolve('limit'), WAIT_LIMIT_MS);
      timer.unref();
    });
    try {
      const won = await untilCancelled(Promise.race([before, limit]), signal);
      if (won === 'limit') {
        this.log.warn(
          `a write naming git's names waited ${WAIT_LIMIT_MS / 1000} s for the ones before it to be answered; checking it now`,
        );
      }
    } finally {
      clearTimeout(timer);
    }
  }

  /** Request `key` was answered, refused, cancelled or dropped: the next write may go. */
  done(key: string | undefined): void {
    if (key === undefined) return;
    const release = this.held.get(key);
    if (release === undefined) return;
    this.held.delete(key);
    release();
  }
}
