/** Run async operations one at a time, in the order they were asked for. */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  /** `onError` hears each failed operation (the caller still gets the rejection). */
  constructor(private readonly onError?: (err: unknown) => void) {}

  /** Run `op` after every operation queued before it; a failure does not stop the ones after. */
  run<T>(op: () => Promise<T>): Promise<T> {
    const result = this.tail.then(op, op);
    this.tail = result.catch((err: unknown) => this.onError?.(err));
    return result;
  }

  /** Resolves once every operation queued so far has finished. */
  async idle(): Promise<void> {
    await this.tail;
  }
}
