/** Tool calls wait here after a root was added, until the server has applied the list with it. */
import type { ProxyLogger } from './log.js';

/**
 * A gate closed by `close` and opened by `open` or after `holdMs`, whichever comes first: a call
 * on a new root would otherwise reach a server that still has the old list and refuses it.
 */
export class RootsHold {
  private hold: { promise: Promise<void>; release: () => void } | undefined;
  /** Bumped by every `close`, held already or not: an `open` for an older list keeps a newer hold. */
  private closes = 0;

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

  /** Which change the hold is for now: taken when the server is answered a list, for `open`. */
  get generation(): number {
    return this.closes;
  }

  /** Hold the calls that arrive from now (a hold already on stays as it is). */
  close(): void {
    this.closes++;
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

  /**
   * The server has applied the list it was answered at `generation`: let the held calls go,
   * unless a change came since (the list with it ends the hold). No `generation`: go anyway.
   */
  open(generation?: number): void {
    if (generation !== undefined && generation !== this.closes) return;
    const hold = this.hold;
    if (hold === undefined) return;
    this.hold = undefined;
    hold.release();
  }
}
