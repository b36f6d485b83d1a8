/** A tiny seeded PRNG (mulberry32) for the fuzzers: the same seed gives the same run. */

/** A deterministic random source; `seed` is printed by a failing fuzz run so it can be replayed. */
export class Rng {
  private state: number;

  constructor(readonly seed: number) {
    this.state = seed >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }

  /** `n` random bytes. */
  bytes(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) out[i] = Math.floor(this.next() * 256);
    return out;
  }

  /** A random printable-ish string of up to `max` characters, with some non-ASCII and controls. */
  text(max: number): string {
    const n = this.int(0, max);
    let s = '';
    for (let i = 0; i < n; i++) {
      const r = this.next();
      if (r < 0.7) s += String.fromCharCode(this.int(0x20, 0x7e));
      else if (r < 0.8) s += String.fromCharCode(this.int(0, 0x1f));
      else if (r < 0.95) s += String.fromCodePoint(this.int(0xa0, 0x2fff));
      else s += String.fromCodePoint(this.int(0x1f300, 0x1f6ff));
    }
    return s;
  }
}

/** The seed for a fuzz run: `FUZZ_SEED` from the environment, else a fresh one. */
export function fuzzSeed(env: Record<string, string | undefined> = process.env): number {
  const given = env.FUZZ_SEED;
  if (given !== undefined && given !== '') return Number(given) >>> 0;
  return Math.floor(Math.random() * 2 ** 32) >>> 0;
}
