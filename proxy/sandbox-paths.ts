/** Path tests the sandbox's layout shares (sandbox-mounts.ts, sandbox-includes.ts). */
import { dirname, sep } from 'node:path';

/** Whether `p` is `dir` or lies inside it, by whole segments. */
export const inside = (p: string, dir: string): boolean =>
  p === dir || p.startsWith(dir === sep ? sep : dir + sep);

/** The directories above `p`, nearest first, up to (not including) `/`. */
export function ancestors(p: string): string[] {
  const out: string[] = [];
  for (let d = dirname(p); d !== dirname(d); d = dirname(d)) out.push(d);
  return out;
}
