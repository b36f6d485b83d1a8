/**
 * Random interleavings of moves, creations, removals and links under a `**` root's tree watch
 * (daemon/watch-tree.ts), from fixed seeds so that a failure can be run again: each sequence
 * mixes `mkdir`, `mkdir -p`, moves within the tree, moves over a removed directory, `rm -r`,
 * moves out of the tree and back (with a link in between, sometimes), and directories replaced
 * by links, with a varying number of event-loop turns between the steps. After each sequence the
 * watch must end with exactly the directories that stand, each by a live watch
 * (test/helpers/tree-watch.ts), without a rescan. watch-tree-moves.test.ts has the named cases.
 */
import { existsSync, mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { standingDirs, turns, watchedTree } from '../helpers/tree-watch.js';

/** A small deterministic generator (a linear congruential one): the same seed, the same steps. */
function generator(seed: number) {
  let s = seed;
  const next = (n: number) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s % n;
  };
  return { next, pick: <T>(a: T[]): T => a[next(a.length)]! };
}

const NAMES = ['a', 'b', 'c'];
const SEEDS = Array.from({ length: 40 }, (_, i) => i + 1);
const STEPS = 12;

for (const seed of SEEDS) {
  void t.test(`seed ${seed}`, async (t) => {
    const { next, pick } = generator(seed);
    const w = await watchedTree(t, (r) => {
      mkdirSync(join(r, 'a/b'), { recursive: true });
      mkdirSync(join(r, 'b/c'), { recursive: true });
    });
    const { root: r, outside: o } = w;
    const log: string[] = [];
    const rel = (p: string) => p.slice(r.length + 1);
    for (let i = 0; i < STEPS; i++) {
      const dirs = standingDirs(r).filter((d) => d !== r && !/\/sentinel-/.test(d));
      const op = dirs.length === 0 ? 0 : next(8);
      const a = pick(dirs.length > 0 ? dirs : [r]);
      const b = join(pick([r, ...dirs]), pick(NAMES));
      if (op === 0 && !existsSync(b)) {
        mkdirSync(b);
        log.push(`mkdir ${rel(b)}`);
      } else if (op === 1) {
        mkdirSync(join(b, pick(NAMES)), { recursive: true });
        log.push(`mkdir -p ${rel(b)}/…`);
      } else if (op === 2 && !existsSync(b) && !b.startsWith(`${a}/`)) {
        renameSync(a, b);
        log.push(`mv ${rel(a)} ${rel(b)}`);
      } else if (op === 3) {
        rmSync(a, { recursive: true });
        log.push(`rm -r ${rel(a)}`);
      } else if (op === 4 && existsSync(b) && b !== a && !b.startsWith(`${a}/`)) {
        if (!a.startsWith(`${b}/`)) {
          rmSync(b, { recursive: true });
          renameSync(a, b);
          log.push(`rm -r ${rel(b)}; mv ${rel(a)} ${rel(b)}`);
        }
      } else if (op === 5 || op === 6) {
        const away = join(o, `x${i}`);
        renameSync(a, away);
        await turns(next(4));
        if (op === 6) {
          symlinkSync(away, a);
          await turns(next(4));
          unlinkSync(a);
        }
        renameSync(away, a);
        log.push(`mv ${rel(a)} out${op === 6 ? '; ln -s; rm' : ''}; mv back`);
      } else if (op === 7) {
        const away = join(o, `y${i}`);
        renameSync(a, away);
        symlinkSync(away, a);
        log.push(`${rel(a)} → a link out`);
      }
      await turns(next(6));
    }
    await w.quiet();
    t.same(
      await w.verify(`seed ${seed}: ${log.join('; ')}`),
      [],
      'exactly the standing directories are watched, live',
    );
  });
}
