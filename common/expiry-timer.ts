/**
 * One timer for the next expiry instant (a grant's, a policy entry's), for the daemon and for a
 * proxy that ends a sandbox's mount by its own clock.
 *
 * Node's timers count time the machine is awake (libuv's monotonic clock stops while it sleeps),
 * and an expiry is a time of day: a timer armed for an hour before a two-hour sleep would fire an
 * hour after waking, and until then a sandboxed server would keep the expired grant's mount. So
 * the wait is made in steps of at most a minute, each comparing the clock with the instant: after
 * a sleep the expiry is acted on within a minute of waking. A wake-up a minute, only while
 * something is to expire.
 */

/** The longest delay `setTimeout` honours. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** The longest step of a wait: how late an expiry may be acted on after the machine slept. */
export const EXPIRY_STEP_MS = 60_000;

/** Fires `onExpiry` at the instant last `set`; setting again replaces it. */
export class ExpiryTimer {
  private handle: NodeJS.Timeout | undefined;

  constructor(
    private readonly onExpiry: () => void,
    private readonly stepMs = EXPIRY_STEP_MS,
  ) {}

  /** Fire at `at` (ms since the epoch, by `now`); undefined clears. One past fires at once. */
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
      // Not yet: wait a step at most, then look at the clock again.
      this.handle = setTimeout(arm, Math.min(delay, this.stepMs));
      this.handle.unref();
    };
    arm();
  }

  clear(): void {
    if (this.handle) clearTimeout(this.handle);
    this.handle = undefined;
  }
}
