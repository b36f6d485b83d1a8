/**
 * Moves, removals, creations and links under a `**` root's tree watch (daemon/watch-tree.ts),
 * run at every pace, each ending with exactly the directories that stand watched, each by a live
 * watch, without waiting for a rescan.
 *
 * inotify watches follow the inode, so a directory moved away and back (`mv P Q; mkdir Q/x;
 * mv Q P`) is watched at `P` by a watch that reported `Q/x` as `P/x` meanwhile, a directory moved
 * over a removed one takes its name with its own watches, and a directory replaced by a link
 * leaves watches that follow it out of the tree. Each case runs its steps as fast as it can, or
 * waits after each one until the watch has acted on it, or lets a few turns of the event loop
 * pass between them (more each round), so that the watch's looks meet every point between the
 * steps. Then it waits until the watch has acted on everything (`quiet`), compares what is
 * watched with what stands, and makes a directory inside every directory that stands: each must
 * be reported by its own event.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { turns, watchedTree } from '../helpers/tree-watch.js';

type Pace = 'at once' | 'step by step' | 'turns between';

/** One shape of the class: the tree before, and the steps (`r` the root, `o` outside it). */
interface Case {
  name: string;
  /** Directories made (with their parents) before the watch starts, in the root. */
  before: string[];
  steps: ((r: string, o: string) => void)[];
}

const mv = (from: string, to: string) => (r: string, o: string) =>
  renameSync(at(r, o, from), at(r, o, to));
const mkdir = (p: string) => (r: string, o: string) =>
  void mkdirSync(at(r, o, p), { recursive: true });
const rmrf = (p: string) => (r: string, o: string) => rmSync(at(r, o, p), { recursive: true });
/** A link at `p` to `target` (both spelled as for `at`). */
const ln = (target: string, p: string) => (r: string, o: string) =>
  symlinkSync(at(r, o, target), at(r, o, p));
const unlink = (p: string) => (r: string, o: string) => unlinkSync(at(r, o, p));
/** `out:x` is `x` outside the tree; anything else is in the root. */
const at = (r: string, o: string, p: string) =>
  p.startsWith('out:') ? join(o, p.slice(4)) : join(r, p);

const CASES: Case[] = [
  {
    name: 'mv P Q; mkdir Q/x; mv Q P',
    before: ['P'],
    steps: [mv('P', 'Q'), mkdir('Q/x'), mv('Q', 'P')],
  },
  {
    name: 'mv P Q; mkdir -p Q/x/y; mv Q P, with a watched child',
    before: ['P/old'],
    steps: [mv('P', 'Q'), mkdir('Q/x/y'), mv('Q', 'P')],
  },
  {
    name: 'a nested directory: mv D/P D/Q; mkdir D/Q/x; mv D/Q D/P',
    before: ['D/P'],
    steps: [mv('D/P', 'D/Q'), mkdir('D/Q/x'), mv('D/Q', 'D/P')],
  },
  {
    name: 'into another watched directory and back: mv P E/P; mkdir E/P/x; mv E/P P',
    before: ['P', 'E'],
    steps: [mv('P', 'E/P'), mkdir('E/P/x'), mv('E/P', 'P')],
  },
  {
    name: 'twice over: mv P Q; mkdir Q/x; mv Q P; mv P Q; mkdir Q/x/z; mv Q P',
    before: ['P'],
    steps: [mv('P', 'Q'), mkdir('Q/x'), mv('Q', 'P'), mv('P', 'Q'), mkdir('Q/x/z'), mv('Q', 'P')],
  },
  {
    name: 'a nested tree moved down and back up: mv A B/A; mkdir B/A/1/3; mv B/A A',
    before: ['A/1/2', 'B'],
    steps: [mv('A', 'B/A'), mkdir('B/A/1/3'), mv('B/A', 'A')],
  },
  {
    name: 'a nested tree moved under itself renamed: mv A A2; mkdir A2/1/n; mv A2/1 A3; mv A2 A3/A',
    before: ['A/1/2'],
    steps: [mv('A', 'A2'), mkdir('A2/1/n'), mv('A2/1', 'A3'), mv('A2', 'A3/A')],
  },
  {
    name: 'moved over a removed directory: rm -r B; mv A B',
    before: ['A/x/y', 'B/z'],
    steps: [rmrf('B'), mv('A', 'B')],
  },
  {
    name: 'moved over a removed directory and back: rm -r B; mv A B; mkdir B/n; mv B A; mkdir B',
    before: ['A/x', 'B/z'],
    steps: [rmrf('B'), mv('A', 'B'), mkdir('B/n'), mv('B', 'A'), mkdir('B')],
  },
  {
    name: 'removed and made again under the same name: rm -r P; mkdir -p P/x; rm -r P/x; mkdir P/x',
    before: ['P/x/y'],
    steps: [rmrf('P'), mkdir('P/x'), rmrf('P/x'), mkdir('P/x')],
  },
  {
    name: 'out of the tree and back: mv P out; mkdir out/P/x; mv out P',
    before: ['P/old'],
    steps: [mv('P', 'out:P'), mkdir('out:P/x'), mv('out:P', 'P')],
  },
  {
    name: 'replaced by a link out and back: mv P out; ln -s out P; mkdir out/P/x; rm P; mv out P',
    before: ['P/old'],
    steps: [mv('P', 'out:P'), ln('out:P', 'P'), mkdir('out:P/x'), unlink('P'), mv('out:P', 'P')],
  },
  {
    name: 'replaced by a link into the tree and back: mv P out; ln -s E P; mkdir E/n; rm P; mv out P',
    before: ['P/x', 'E'],
    steps: [mv('P', 'out:P'), ln('E', 'P'), mkdir('E/n'), unlink('P'), mv('out:P', 'P')],
  },
  {
    name: 'a parent replaced by a link, then by a new one: mv D out; ln -s out D; rm D; mkdir -p D/P/new',
    before: ['D/P'],
    steps: [mv('D', 'out:D'), ln('out:D', 'D'), unlink('D'), mkdir('D/P/new')],
  },
  {
    name: 'two directories swapped: mv A T; mv B A; mv T B; mkdir A/n B/n',
    before: ['A/a', 'B/b'],
    steps: [mv('A', 'T'), mv('B', 'A'), mv('T', 'B'), mkdir('A/n'), mkdir('B/n')],
  },
  {
    name: 'a chain of names: mv P Q; mv Q R; mkdir R/x; mv R P',
    before: ['P/old'],
    steps: [mv('P', 'Q'), mv('Q', 'R'), mkdir('R/x'), mv('R', 'P')],
  },
];

const PACES: Pace[] = ['at once', 'step by step', 'turns between'];
/** Each case is run this many times: the order in which the looks end varies from run to run. */
const ROUNDS = 6;

for (const c of CASES) {
  for (const pace of PACES) {
    void t.test(`${c.name} (${pace})`, async (t) => {
      const problems: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const w = await watchedTree(t, (r) => {
          for (const d of c.before) mkdirSync(join(r, d), { recursive: true });
        });
        for (const step of c.steps) {
          step(w.root, w.outside);
          if (pace === 'turns between') await turns(round);
          if (pace === 'step by step') await w.quiet();
        }
        await w.quiet();
        problems.push(...(await w.verify(`round ${round}`)));
        await w.handle.close();
      }
      t.same(problems, [], `${ROUNDS} rounds: exactly the standing directories are watched, live`);
    });
  }
}
