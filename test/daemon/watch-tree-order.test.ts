/**
 * A look of the tree watch (daemon/watch-tree.ts) made of two system calls that see two moments.
 * An event's look is an `lstat` of the entry and a `realpath` of its directory; a new watch's check
 * is an `lstat` and a `realpath` of the directory watched. A directory above moved away and back
 * between the two makes the look act on a state that held for an instant only: it takes a
 * directory that stands for gone, and closes (or never keeps) its watch. The OS will not put a
 * move between two given system calls on demand, so here the chosen call itself moves the
 * directory away (a real `rename`), makes the real call, and moves it back. The events of those
 * real moves come after the look: the watch must end with exactly the standing directories
 * watched, each by a live watch, without a rescan.
 */
import * as fs from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { waitFor } from '../helpers/poll.js';
import { watchedTree } from '../helpers/tree-watch.js';

/**
 * A module beside this test's compiled file, by full URL, for `t.mockImport`: tap resolves a
 * relative name against the caller's source-mapped location (the .ts file in test/), where no
 * compiled module is.
 */
// eslint-disable-next-line no-restricted-syntax -- the compiled module is what is wanted here
const compiled = (rel: string): string => new URL(rel, import.meta.url).href;

interface Case {
  name: string;
  /** The call that sees the moment: which system call, on which path (in the root). */
  call: 'lstat' | 'realpath';
  path: string;
  /** Which of those calls (1 = the first after the trigger): the event's look, or the watch's. */
  nth: number;
  /** The directory moved away and back around it (in the root), and the name it is parked at. */
  moved: string;
  /** Directories made before the watch starts, and the creation that starts the looks. */
  before: string[];
  trigger: string;
}

const CASES: Case[] = [
  {
    name: "an event's look: the lstat of P/x sees P away",
    call: 'lstat',
    path: 'P/x',
    nth: 1,
    moved: 'P',
    before: ['P'],
    trigger: 'P/x',
  },
  {
    name: "a new watch's check: the lstat of P/x sees P away",
    call: 'lstat',
    path: 'P/x',
    nth: 2,
    moved: 'P',
    before: ['P'],
    trigger: 'P/x',
  },
  {
    name: "a new watch's check: the realpath of P/x sees P away",
    call: 'realpath',
    path: 'P/x',
    nth: 1,
    moved: 'P',
    before: ['P'],
    trigger: 'P/x',
  },
  {
    name: "an event's look: the realpath of D/P sees D away",
    call: 'realpath',
    path: 'D/P',
    nth: 1,
    moved: 'D',
    before: ['D/P'],
    trigger: 'D/P/x',
  },
  {
    name: "a deeper watch's check: the lstat of D/P/x/y sees D away",
    call: 'lstat',
    path: 'D/P/x/y',
    nth: 1,
    moved: 'D',
    before: ['D/P'],
    trigger: 'D/P/x/y',
  },
];

for (const c of CASES) {
  void t.test(c.name, async (t) => {
    let root = '';
    let armed = false;
    let calls = 0;
    let injected = 0;
    /** Run `real` with `c.moved` away, when it is the chosen call. */
    const around =
      <A extends unknown[], R>(call: Case['call'], real: (...a: A) => R) =>
      (...a: A): R => {
        if (!armed || call !== c.call || String(a[0]) !== join(root, c.path)) return real(...a);
        if (++calls !== c.nth) return real(...a);
        armed = false;
        injected++;
        const here = join(root, c.moved);
        const away = join(root, `${c.moved}-away`);
        fs.renameSync(here, away);
        try {
          return real(...a);
        } finally {
          fs.renameSync(away, here);
        }
      };
    const realpathSync = Object.assign(around('realpath', fs.realpathSync), {
      native: around('realpath', fs.realpathSync.native),
    });
    const { watchTree } = await t.mockImport<typeof import('../../daemon/watch-tree.js')>(
      compiled('../../daemon/watch-tree.js'),
      {
        'node:fs': { ...fs, lstatSync: around('lstat', fs.lstatSync), realpathSync },
      },
    );
    const w = await watchedTree(
      t,
      (r) => {
        for (const d of c.before) fs.mkdirSync(join(r, d), { recursive: true });
      },
      watchTree,
    );
    root = w.root;
    armed = true;
    fs.mkdirSync(join(root, c.trigger), { recursive: true });
    // The moves are made while the watch handles the creation's events: `quiet` waits for the
    // events queued before it, so it starts once they are made.
    await waitFor(() => injected === 1, 10_000, 'the chosen call');
    armed = false;
    await w.quiet();
    t.same(await w.verify(c.name), [], 'exactly the standing directories are watched, live');
  });
}
