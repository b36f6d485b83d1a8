/**
 * The root directories to watch, worked out from the policy alone, before a resolution walks
 * them. The daemon sets these watches first and resolves after: a change made while the walk
 * reads is then either seen by the walk or reported by the watch, and no second walk is needed
 * to catch up with what happened between the walk and the watch.
 *
 * Each entry's target is what `expandEntry` will choose (both call `watchFor`), asked a moment
 * earlier. Links are followed as they are now, without the daemon's pins: where a pin refuses a
 * base, the resolution watches elsewhere, and the daemon treats that watch as new (it looks
 * again once it is set), as it does for any target that differs.
 */
import { anchorOf } from './anchor.js';
import { dedupeDirs, watchFor } from './entry.js';
import { isGlob } from './expand.js';
import { memoFs } from './fs.js';
import { globShape } from './glob.js';
import type { ParsedPolicyFile, PolicyContext, WatchPlan } from './model.js';
import { canonicalizeLoose } from './paths.js';

/** The directory watches a resolution's root entries need (a watch plan without policy files). */
export type RootWatches = Pick<WatchPlan, 'dirs' | 'recursive'>;

/** Every root entry's watch target at `ctx.now` (expired entries need none), each once. */
export async function watchTargets(
  files: ParsedPolicyFile[],
  ctx: PolicyContext,
): Promise<RootWatches> {
  const fs = memoFs(ctx.fs);
  const canonicalHome = await canonicalizeLoose(fs, ctx.home).catch(() => ctx.home);
  const seen = new Set<string>();
  const targets: Promise<RootWatches>[] = [];
  for (const file of files) {
    for (const block of file.servers) {
      for (const entry of block.roots) {
        const abs = entry.abs;
        if (abs === undefined || seen.has(abs)) continue;
        if (entry.expires !== undefined && entry.expires <= ctx.now) continue;
        seen.add(abs);
        targets.push(
          (async () => {
            const literal = await fs.lstat(abs).then(
              () => true,
              () => false,
            );
            // Where the path (or a glob's base) leads, as expandEntry asks it.
            const base = await anchorOf(fs, literal || !isGlob(abs) ? abs : globShape(abs).base, {
              home: ctx.home,
              canonicalHome,
              pins: undefined,
            });
            const w = await watchFor(fs, abs, literal, base);
            return { dirs: w.dir ? [w.dir] : [], recursive: w.recursive ? [w.recursive] : [] };
          })(),
        );
      }
    }
  }
  const all = await Promise.all(targets);
  const recursive = new Map<string, RootWatches['recursive'][number]>();
  for (const t of all)
    for (const r of t.recursive) recursive.set(`${r.path}\0${r.ignore.join('\0')}`, r);
  return { dirs: dedupeDirs(all.flatMap((t) => t.dirs)), recursive: [...recursive.values()] };
}
