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

  has(key: string | undefined): boolean {
    return key !== undefined && this.keys.has(key);
  }
}
