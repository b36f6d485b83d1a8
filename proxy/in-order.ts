/** Items handled one at a time in arrival order: a host call being checked keeps its place in the stream. */
export class InOrder<T> {
  private readonly queue: T[] = [];
  private running = false;
  private ended = false;

  /**
   * `handle` runs for each item after the previous one finished; what it throws goes to `onError`
   * and the next item runs. `onDone` runs once `end` was called and the queue has drained.
   */
  constructor(
    private readonly handle: (item: T) => Promise<void>,
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
    if (this.ended && this.queue.length === 0) this.onDone();
  }
}
