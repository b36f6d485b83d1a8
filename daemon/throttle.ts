/** At most one delivery per key per window; what arrives meanwhile is delivered (the latest only) when it ends. */
export class Throttle<T> {
  private readonly last = new Map<string, number>();
  private readonly waiting = new Map<string, { value: T; timer: NodeJS.Timeout }>();

  constructor(
    private readonly windowMs: number,
    private readonly deliver: (key: string, value: T) => void,
  ) {}

  /** Deliver now if the key's window is open, else once it ends (replacing an earlier waiting value). */
  offer(key: string, value: T): void {
    const queued = this.waiting.get(key);
    if (queued) {
      queued.value = value;
      return;
    }
    const since = performance.now() - (this.last.get(key) ?? -Infinity);
    if (since >= this.windowMs) {
      this.fire(key, value);
      return;
    }
    const timer = setTimeout(() => {
      const w = this.waiting.get(key);
      this.waiting.delete(key);
      if (w) this.fire(key, w.value);
    }, this.windowMs - since);
    this.waiting.set(key, { value, timer });
  }

  clear(): void {
    for (const w of this.waiting.values()) clearTimeout(w.timer);
    this.waiting.clear();
  }

  private fire(key: string, value: T): void {
    this.last.set(key, performance.now());
    // Forget keys whose window has long passed, so the map does not grow with every name.
    if (this.last.size > 1024) {
      const cutoff = performance.now() - this.windowMs;
      for (const [k, t] of this.last) if (t < cutoff) this.last.delete(k);
    }
    this.deliver(key, value);
  }
}
