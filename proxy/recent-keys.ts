/** A bounded memory of keys (answered ids, progress tokens) that never grows for ever. */
export class RecentKeys {
  private readonly keys = new Set<string>();
  constructor(private readonly max = 1024) {}

  add(key: string | undefined): void {
    if (key === undefined) return;
    this.keys.add(key);
    if (this.keys.size > this.max) {
      const first = this.keys.values().next();
      if (first.done !== true) this.keys.delete(first.value);
    }
  }

  /** Forget `key` (a host request id used again for a request that went on to the server). */
  delete(key: string | undefined): void {
    if (key !== undefined) this.keys.delete(key);
  }

  has(key: string | undefined): boolean {
    return key !== undefined && this.keys.has(key);
  }
}
