/**
 * Ids of requests one side sent and the other has not answered yet, bounded: a peer that never
 * answers cannot make the set grow without end (the oldest are forgotten first, and an answer to
 * a forgotten one is dropped like any answer to nothing).
 */
const LIMIT = 10_000;

export class OpenIds {
  private readonly ids = new Set<string>();

  add(key: string | undefined): void {
    if (key === undefined) return;
    this.ids.delete(key);
    this.ids.add(key);
    if (this.ids.size > LIMIT) this.ids.delete(this.ids.values().next().value!);
  }

  /** Forget them all: the peer that sent them is gone (a restarted server asked nothing yet). */
  clear(): void {
    this.ids.clear();
  }

  /** True, and forgotten, if `key` was open. */
  take(key: string | undefined): boolean {
    return key !== undefined && this.ids.delete(key);
  }
}
