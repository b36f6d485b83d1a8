/** Tool calls wait here after a root was added, until the server has fetched the list with it. */
import type { ProxyLogger } from './log.js';

/** How long the server may take to apply a list it fetched (realpath of each root). */
export const APPLY_GRACE_MS = 50;

/**
 * A gate closed by `close` and opened by `open` or after `holdMs`, whichever comes first: a call
 * on a new root would otherwise reach a server that still has the old list and refuses it.
 */
export class RootsHold {
  private hold: { promise: Promise<void>; release: () => void } | undefined;

  constructor(
    private readonly holdMs: number,
    private readonly log: ProxyLogger,
  ) {}

  /** Resolves at once when open, else when the hold ends. */
  passed(): Promise<void> {
    return this.hold?.promise ?? Promise.resolve();
  }

  /** Whether calls wait now. */
  get closed(): boolean {
    return this.hold !== undefined;
  }

  /** Hold the calls that arrive from now (a hold already on stays as it is). */
  close(): void {
    if (this.hold !== undefined) return;
    let release!: () => void;
    const promise = new Promise<void>((resolve) => {
      release = resolve;
    });
    const timer = setTimeout(() => {
      this.log.debug(`the server did not fetch its new roots within ${this.holdMs} ms`);
      this.open();
    }, this.holdMs);
    this.hold = {
      promise,
      release: () => {
        clearTimeout(timer);
        release();
      },
    };
  }

  /** The server has the new list: let the held calls go once it has had a moment to apply it. */
  open(): void {
    const hold = this.hold;
    if (hold === undefined) return;
    this.hold = undefined;
    setTimeout(() => hold.release(), APPLY_GRACE_MS).unref();
  }
}
