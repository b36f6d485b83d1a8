/**
 * A watched directory moved to another name, given a new directory there, and moved back
 * (`mv P Q; mkdir Q/x; mv Q P`) under a `**` root's tree watch (daemon/watch-tree.ts). inotify
 * watches follow the inode, so the watch set for `P` reports the new `x` as `P/x` while the
 * directory is at `Q`, and once it is back at `P` its inode is the one watched before: a look
 * at `P` that takes the watch for a live one would leave `P/x` without a watch, and every later
 * change inside it missed until the periodic rescan.
 *
 * Each case runs the moves as fast as it can, or waits between them for the watcher to act on
 * each one (so that every order of looks is met), then makes a directory inside every directory
 * the moves left and waits for its event: a directory without a watch never reports it.
 */
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { watchTree, type TreeHandle } from '../../daemon/watch-tree.js';
import { waitFor } from '../helpers/poll.js';

interface Seen {
  kind: string;
  path: string;
}

/**
 * How the moves are paced: at once; each one's effect waited for in the watcher; or a few turns
 * of the event loop between them (more each round), so that the watcher's looks, which run on
 * the thread pool, end at every point between the moves.
 */
type Pace = 'at once' | 'step by step' | 'turns between';

/** Let the watcher (in this process) read and start handling what happened so far. */
const turn = (n: number) =>
  Array.from({ length: n }).reduce<Promise<void>>(
    (p) => p.then(() => new Promise<void>((r) => setImmediate(r))),
    Promise.resolve(),
  );

/** One shape of the class: the moves and what stands in the tree after them. */
interface Case {
  name: string;
  /** Directories made before the watch starts. */
  before: string[];
  /** The moves and creations, as steps; `settled` says when the watcher has acted on a step. */
  steps: { act: (r: string) => void; settled?: (r: string, h: TreeHandle) => boolean }[];
  /** Directories that stand after the moves and must each be watched. */
  after: string[];
  /** Paces at which the watcher is known to lose a watch here (a race not closed yet). */
  races?: Pace[];
}

const has = (h: TreeHandle, r: string, p: string) => h.directories().includes(join(r, p));

const CASES: Case[] = [
  {
    name: 'mv P Q; mkdir Q/x; mv Q P',
    before: ['P'],
    steps: [
      { act: (r) => renameSync(join(r, 'P'), join(r, 'Q')), settled: (r, h) => has(h, r, 'Q') },
      { act: (r) => mkdirSync(join(r, 'Q/x')), settled: (r, h) => has(h, r, 'Q/x') },
      {
        act: (r) => renameSync(join(r, 'Q'), join(r, 'P')),
        settled: (r, h) => !has(h, r, 'Q') && has(h, r, 'P'),
      },
    ],
    after: ['P', 'P/x'],
  },
  {
    name: 'mv P Q; mkdir -p Q/x/y; mv Q P, with a watched child',
    before: ['P/old'],
    steps: [
      { act: (r) => renameSync(join(r, 'P'), join(r, 'Q')), settled: (r, h) => has(h, r, 'Q') },
      {
        act: (r) => mkdirSync(join(r, 'Q/x/y'), { recursive: true }),
        settled: (r, h) => has(h, r, 'Q/x/y'),
      },
      {
        act: (r) => renameSync(join(r, 'Q'), join(r, 'P')),
        settled: (r, h) => !has(h, r, 'Q') && has(h, r, 'P'),
      },
    ],
    after: ['P', 'P/old', 'P/x', 'P/x/y'],
  },
  {
    name: 'a nested directory: mv D/P D/Q; mkdir D/Q/x; mv D/Q D/P',
    before: ['D/P'],
    steps: [
      {
        act: (r) => renameSync(join(r, 'D/P'), join(r, 'D/Q')),
        settled: (r, h) => has(h, r, 'D/Q'),
      },
      { act: (r) => mkdirSync(join(r, 'D/Q/x')), settled: (r, h) => has(h, r, 'D/Q/x') },
      {
        act: (r) => renameSync(join(r, 'D/Q'), join(r, 'D/P')),
        settled: (r, h) => !has(h, r, 'D/Q') && has(h, r, 'D/P'),
      },
    ],
    after: ['D/P', 'D', 'D/P/x'],
  },
  {
    name: 'moved into another watched directory and back: mv P E/P; mkdir E/P/x; mv E/P P',
    before: ['P', 'E'],
    steps: [
      {
        act: (r) => renameSync(join(r, 'P'), join(r, 'E/P')),
        settled: (r, h) => has(h, r, 'E/P'),
      },
      { act: (r) => mkdirSync(join(r, 'E/P/x')), settled: (r, h) => has(h, r, 'E/P/x') },
      {
        act: (r) => renameSync(join(r, 'E/P'), join(r, 'P')),
        settled: (r, h) => !has(h, r, 'E/P') && has(h, r, 'P'),
      },
    ],
    after: ['P', 'P/x', 'E'],
  },
  {
    name: 'twice over: mv P Q; mkdir Q/x; mv Q P; mv P Q; mkdir Q/x/z; mv Q P',
    before: ['P'],
    steps: [
      { act: (r) => renameSync(join(r, 'P'), join(r, 'Q')) },
      { act: (r) => mkdirSync(join(r, 'Q/x')) },
      { act: (r) => renameSync(join(r, 'Q'), join(r, 'P')) },
      { act: (r) => renameSync(join(r, 'P'), join(r, 'Q')) },
      { act: (r) => mkdirSync(join(r, 'Q/x/z')) },
      { act: (r) => renameSync(join(r, 'Q'), join(r, 'P')) },
    ],
    after: ['P', 'P/x', 'P/x/z'],
    // With a few turns between the moves, a directory of the tree is sometimes left without a
    // watch (`P/x`, or `P`) until the periodic rescan: looks at a path and at its parent, each
    // made of an `lstat` and a `realpath` that do not see the same moment, end in an order
    // that closes a watch just set. Kept here, as a known failure, until the tree watch
    // orders a look below a directory after that directory's own look.
    races: ['turns between'],
  },
];

const PACES: Pace[] = ['at once', 'step by step', 'turns between'];
/** Each case is run this many times: the order in which the looks end varies from run to run. */
const ROUNDS = 8;

for (const c of CASES) {
  for (const pace of PACES) {
    const race = c.races?.includes(pace) === true;
    const opts = race ? { todo: 'a known race: a watch is lost until the rescan' } : {};
    void t.test(`${c.name} (${pace})`, opts, async (t) => {
      for (let round = 0; round < ROUNDS; round++) {
        const r = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-roots-tree-moves-')));
        t.teardown(() => rmSync(r, { recursive: true, force: true }));
        for (const d of c.before) mkdirSync(join(r, d), { recursive: true });
        const seen: Seen[] = [];
        const errors: Error[] = [];
        const h = await watchTree(
          r,
          (e) => seen.push({ kind: e.kind, path: e.path }),
          (err) => errors.push(err),
          { ignore: [], onOverflow: () => errors.push(new Error('overflow')) },
        );
        try {
          for (const step of c.steps) {
            step.act(r);
            if (pace === 'turns between') await turn(round);
            if (pace === 'step by step' && step.settled)
              await waitFor(() => step.settled!(r, h), 10_000, `${c.name}: a step's watches`);
          }
          // The last move's own report: the watcher has looked at where the moves ended.
          const last = c.after[0]!;
          await waitFor(
            () => seen.some((e) => e.kind === 'create' && e.path === join(r, last)),
            10_000,
            `${c.name}: the report of ${last}`,
          );
          // A new directory inside every directory that stands: each is reported only by a
          // live watch of its parent (none is walked: the parent is watched already).
          for (const d of c.after) mkdirSync(join(r, d, `probe-${round}`));
          for (const d of c.after) {
            const probe = join(r, d, `probe-${round}`);
            await waitFor(
              () => seen.some((e) => e.kind === 'create' && e.path === probe),
              10_000,
              `${c.name} (${pace}, round ${round}): the creation of ${probe}`,
            );
          }
          t.same(errors, [], 'no watch error');
        } finally {
          await h.close();
        }
      }
      t.pass(`${ROUNDS} rounds: every directory the moves left reports its changes`);
    });
  }
}
