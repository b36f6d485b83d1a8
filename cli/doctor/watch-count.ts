/** How many directories the daemon would watch for a policy: its watch plan, walked (bounded). */
import { readdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { WatchPlan } from '../../policies/index.js';

/** Count the plan's directories; stops counting at `limit` (enough to say "does not fit"). */
export async function countWatches(plan: WatchPlan, limit: number): Promise<number> {
  const seen = new Set<string>();
  for (const f of plan.policyFiles) seen.add(dirname(f));
  for (const d of plan.includeDirs) seen.add(d);
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (seen.size > limit) return;
    seen.add(dir);
    if (depth <= 0) return;
    const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of entries) {
      if (e.isDirectory()) await walk(join(dir, e.name), depth - 1);
    }
  };
  for (const d of plan.dirs) await walk(d.path, d.depth);
  for (const r of plan.recursive) await walk(r.path, Infinity);
  return Math.min(seen.size, limit + 1);
}
