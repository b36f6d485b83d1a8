/**
 * The host's lines are admitted one at a time, in the order they arrived; what takes time after
 * admission runs beside the queue, so the session keeps answering while a call is checked or held.
 *
 * What keeps its order, and why (docs/architecture.md, "What keeps its order"):
 * - Admission is in arrival order and, for every line but a checked request, is the whole of its
 *   handling: `initialize` reaches the server before `notifications/initialized`, which reaches it
 *   before anything the host sent after it; a cancellation is acted on before the next line.
 * - A notification of a method MCP does not define whose params name a path is checked during
 *   its admission (call-gate.ts `otherPaths`): it cannot be answered, so it is relayed or dropped
 *   in its place, and the lines after it wait for the daemon's answer.
 * - Only a restart (another server behind the same session) stops admission: every line waits
 *   for it, in order, so that none reaches the server that is going away.
 * - A `tools/call`, `resources/read` or `prompts/get` (and a 2026-07-28 retry that waits for the
 *   policy's roots) is admitted as pending: it is registered under its id before anything is
 *   awaited, then checked beside the queue, and relayed (or refused) when its check ends. Later
 *   lines do not wait for it, so two calls may reach the server in another order than the host
 *   sent them; JSON-RPC requests in flight together have no order the host may rely on.
 * - A host's cancellation of a pending request aborts its check: it is never relayed and never
 *   answered, and the id is free for the host to use again at once.
 */
export class InOrder<T> {
  private readonly queue: T[] = [];
  private running = false;
  private ended = false;
  private readonly beside = new Set<Promise<void>>();

  /**
   * `handle` admits each item after the previous one was admitted; what it throws goes to
   * `onError` and the next item runs. `onDone` runs once `end` was called, the queue has drained
   * and every task run `besideQueue` has settled.
   */
  constructor(
    private readonly handle: (item: T) => Promise<void> | void,
    private readonly onError: (err: unknown) => void,
    private readonly onDone: () => void,
  ) {}

  push(item: T): void {
    this.queue.push(item);
    void this.run();
  }

  /** No more items will come. */
  end(): void {
    this.ended = true;
    void this.run();
  }

  /** Run `task` beside the queue: later items do not wait for it; the end does. */
  besideQueue(task: Promise<void>): void {
    const tracked = task.catch((err: unknown) => this.onError(err));
    this.beside.add(tracked);
    void tracked.then(() => {
      this.beside.delete(tracked);
      this.maybeDone();
    });
  }

  private async run(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (let item = this.queue.shift(); item !== undefined; item = this.queue.shift()) {
        try {
          await this.handle(item);
        } catch (err) {
          this.onError(err);
        }
      }
    } finally {
      this.running = false;
    }
    this.maybeDone();
  }

  private doneCalled = false;

  private maybeDone(): void {
    if (!this.ended || this.running || this.queue.length > 0 || this.beside.size > 0) return;
    if (this.doneCalled) return;
    this.doneCalled = true;
    this.onDone();
  }
}
