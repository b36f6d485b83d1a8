/**
 * When directory changes are recomputed. The first change recomputes at once (the leading
 * edge); changes that arrive while a recompute runs, or soon after one, wait and are recomputed
 * together (one trailing recompute). Each watched root keeps its own gap: after a recompute that
 * took T ms, changes under the same root wait until 2·T ms after it ended, so a root churned
 * without pause costs the daemon at most a third of a core while other roots' changes still act
 * at once.
 */

/** The gap after a recompute, as a multiple of its duration. */
export const GAP_FACTOR = 2;
/** Beyond this many changed paths in one batch, one full recompute is cheaper than tracking them. */
export const MAX_PATHS = 512;

/** Recomputes `paths` (every path that changed), or everything when undefined. */
export type RunRecompute = (paths: string[] | undefined) => Promise<void>;

export class RecomputeThrottle {
  /** Changed paths per root (the key of its watch); `undefined` means "look at everything". */
  private readonly pending = new Map<string, Set<string> | undefined>();
  /** When each root may recompute again. */
  private readonly nextAt = new Map<string, number>();
  /** Paths to look at once more after the recompute that includes them. */
  private readonly again = new Map<string, Set<string>>();
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly run: RunRecompute) {}

  /**
   * `path` changed under the root watched as `key` (no path: anything under it may have).
   * `twice`: look at it once more after the recompute that includes it, for what was created
   * inside it before its own watch was in place (a recursive watcher reports a new directory,
   * not what appears in it before the watcher has caught up).
   */
  note(key: string, path?: string, twice = false): void {
    if (this.closed) return;
    if (twice && path !== undefined) {
      const set = this.again.get(key) ?? new Set();
      if (set.size < MAX_PATHS) set.add(path);
      this.again.set(key, set);
    }
    if (!this.pending.has(key)) this.pending.set(key, path === undefined ? undefined : new Set());
    const paths = this.pending.get(key);
    if (paths !== undefined) {
      if (path === undefined || paths.size >= MAX_PATHS) this.pending.set(key, undefined);
      else paths.add(path);
    }
    this.schedule();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Recompute now what is due, or arm a timer for the earliest root whose gap ends. */
  private schedule(): void {
    if (this.closed || this.running || this.pending.size === 0) return;
    const now = performance.now();
    let earliest = Infinity;
    for (const key of this.pending.keys()) earliest = Math.min(earliest, this.nextAt.get(key) ?? 0);
    if (earliest <= now) {
      clearTimeout(this.timer);
      this.timer = undefined;
      void this.fire(now);
      return;
    }
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.schedule();
    }, earliest - now);
    this.timer.unref();
  }

  private async fire(now: number): Promise<void> {
    const due: string[] = [];
    let all = false;
    const paths = new Set<string>();
    for (const [key, set] of this.pending) {
      if ((this.nextAt.get(key) ?? 0) > now) continue;
      due.push(key);
      if (set === undefined) all = true;
      else for (const p of set) paths.add(p);
    }
    for (const key of due) this.pending.delete(key);
    const later = due.flatMap((key) => {
      const set = this.again.get(key);
      this.again.delete(key);
      return set ? [...set].map((path) => [key, path] as const) : [];
    });
    this.running = true;
    const started = performance.now();
    try {
      await this.run(all || paths.size > MAX_PATHS ? undefined : [...paths]);
    } finally {
      const ended = performance.now();
      const gap = GAP_FACTOR * (ended - started);
      for (const key of due) this.nextAt.set(key, ended + gap);
      // Roots quiet for long are forgotten, so the map does not grow with every root ever seen.
      if (this.nextAt.size > 1024)
        for (const [k, t] of this.nextAt) if (t < ended) this.nextAt.delete(k);
      this.running = false;
      for (const [key, path] of later) this.note(key, path);
      this.schedule();
    }
  }
}
