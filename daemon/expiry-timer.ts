/** One timer for the next expiry instant, chained past Node's 2^31-1 ms limit. */

/** The longest delay `setTimeout` honours. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** Fires `onExpiry` at the instant last `set`; setting again replaces it. */
export class ExpiryTimer {
  private handle: NodeJS.Timeout | undefined;

  constructor(private readonly onExpiry: () => void) {}

  /** Fire at `at` (ms since the epoch); undefined clears. */
  set(at: number | undefined, now: () => number): void {
    this.clear();
    if (at === undefined) return;
    const arm = () => {
      const delay = at - now();
      if (delay <= 0) {
        this.handle = undefined;
        this.onExpiry();
        return;
      }
      // Longer than one timeout can wait: wait the longest, then look again.
      this.handle = setTimeout(arm, Math.min(delay, MAX_TIMEOUT_MS));
      this.handle.unref();
    };
    arm();
  }

  clear(): void {
    if (this.handle) clearTimeout(this.handle);
    this.handle = undefined;
  }
}
