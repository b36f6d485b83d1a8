/**
 * The daemon sets its roots' watches before the start-up walk reads: a change made while the
 * walk runs (at its beginning, in its middle, at its end) is either seen by the walk or
 * reported by a watch, so the list ends as a fresh resolution's, with no second full walk to
 * catch up. The changes are made by the filesystem view the walk reads through, on the walk's
 * n-th call: real directories, real watches, the state and watcher the daemon assembles.
 */
import { mkdirSync, renameSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { PolicyState } from '../../daemon/state.js';
import { nodeFs, type FsView } from '../../policies/index.js';
import { shortDir } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';
import { startWatchedState } from '../helpers/watch-state.js';

type Teardown = { teardown(fn: () => unknown): void };

/** A change made when the walk makes its `at`-th `op` call at or under `under`. */
interface Trigger {
  op: 'readdir' | 'access';
  under: string;
  at: number;
  change: () => void;
}

/** nodeFs, making each trigger's change just before the call that reaches its count. */
function triggeringFs(triggers: Trigger[], reads: Map<string, number>): FsView {
  const real = nodeFs();
  const counts = new Map<string, number>();
  const count = (op: Trigger['op'], path: string) => {
    if (op === 'readdir') reads.set(path, (reads.get(path) ?? 0) + 1);
    for (const under of new Set(triggers.map((x) => x.under))) {
      if (path !== under && !path.startsWith(`${under}/`)) continue;
      const key = `${op}\0${under}`;
      const n = (counts.get(key) ?? 0) + 1;
      counts.set(key, n);
      for (const x of triggers) if (x.op === op && x.under === under && x.at === n) x.change();
    }
  };
  // Spread, so the engine asks this view (not the kernel directly) for every call.
  return {
    ...real,
    readdir: (p) => {
      count('readdir', p);
      return real.readdir(p);
    },
    access: (p, mode) => {
      count('access', p);
      return real.access(p, mode);
    },
  };
}

/** The state and watcher as the daemon makes them (daemon.ts), on `fs`. */
function start(t: Teardown, dir: string, fs: FsView): Promise<PolicyState> {
  return startWatchedState(t, dir, fs, { level: 'debug' });
}

/** Every server's list as URIs, from a state started now on the real filesystem. */
async function freshLists(t: Teardown, dir: string, servers: string[]): Promise<string> {
  const state = await start(t, dir, nodeFs());
  return listsOf(state, servers);
}

function listsOf(state: PolicyState, servers: string[]): string {
  return JSON.stringify(servers.map((s) => state.roots(s).map((r) => r.uri)));
}

function folders(base: string, n: number, name = (i: number) => `e${i}`): void {
  for (let i = 0; i < n; i++) mkdirSync(join(base, name(i)), { recursive: true });
}

void t.test('changes during the start-up walk end in a fresh resolution’s lists', async (t) => {
  const dir = shortDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const flat = join(dir, 'flat');
  const tree = join(dir, 'tree');
  const ENTRIES = 1500;
  folders(flat, ENTRIES);
  folders(tree, 40, (i) => join(`g${i}`, 'a', 'b'));
  mkdirSync(join(dir, 'run'));
  const policy = `version: 1\nservers:\n  flat:\n    roots:\n      - path: ${flat}/*\n  tree:\n    roots:\n      - path: ${tree}/**\n`;
  writeFileSync(join(dir, 'mcp-roots.yaml'), policy);
  const at = (op: Trigger['op'], under: string, n: number, change: () => void): Trigger => ({
    op,
    under,
    at: n,
    change,
  });
  const triggers: Trigger[] = [
    // Beginning: before the base is read, and at the first matches' readability.
    at('readdir', flat, 1, () => mkdirSync(join(flat, 'new-before-read'))),
    at('access', flat, 1, () => {
      mkdirSync(join(flat, 'new-begin'));
      rmdirSync(join(flat, `e${ENTRIES - 1}`)); // read by readdir, not yet judged
    }),
    // Middle: one judged already renamed, one removed, one created.
    at('access', flat, ENTRIES / 2, () => {
      mkdirSync(join(flat, 'new-mid'));
      renameSync(join(flat, 'e3'), join(flat, 'r3'));
      rmdirSync(join(flat, 'e7'));
    }),
    // End: the last match's readability.
    at('access', flat, ENTRIES - 1, () => {
      mkdirSync(join(flat, 'new-end'));
      rmdirSync(join(flat, 'e11'));
    }),
    // The tree: a nested creation before the walk enters it, a rename it has passed, a removal
    // it has yet to reach, a creation as it reads its last directories.
    at('readdir', tree, 1, () => mkdirSync(join(tree, 'g39', 'x', 'y'), { recursive: true })),
    at('readdir', tree, 60, () => {
      renameSync(join(tree, 'g0'), join(tree, 'g0m'));
      rmSync(join(tree, 'g38', 'a', 'b'), { recursive: true });
      mkdirSync(join(tree, 'g20', 'mid'));
    }),
    at('readdir', tree, 118, () => mkdirSync(join(tree, 'g1', 'a', 'b', 'end'))),
  ];
  const state = await start(t, dir, triggeringFs(triggers, new Map()));
  const servers = ['flat', 'tree'];
  const want = await freshLists(t, dir, servers);
  t.ok(want.includes('new-end') && want.includes('/g39/x/y"'), 'the changes were made');
  await waitFor(() => listsOf(state, servers) === want, 60_000, 'the lists to equal a fresh one');
  t.equal(listsOf(state, servers), want);
});

void t.test('creations during the start-up walk are followed without walking again', async (t) => {
  const dir = shortDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const flat = join(dir, 'flat');
  const ENTRIES = 1500;
  folders(flat, ENTRIES);
  mkdirSync(join(dir, 'run'));
  writeFileSync(
    join(dir, 'mcp-roots.yaml'),
    `version: 1\nservers:\n  flat:\n    roots:\n      - path: ${flat}/*\n`,
  );
  const triggers: Trigger[] = [1, ENTRIES / 2, ENTRIES].map((n) => ({
    op: 'access',
    under: flat,
    at: n,
    change: () => mkdirSync(join(flat, `new-${n}`)),
  }));
  const reads = new Map<string, number>();
  const state = await start(t, dir, triggeringFs(triggers, reads));
  const servers = ['flat'];
  // Made once the daemon is up: when it is listed, what the start left to do is done.
  mkdirSync(join(flat, 'sentinel'));
  await waitFor(
    () => state.roots('flat').some((r) => r.uri.endsWith('/sentinel')),
    60_000,
    'the folder made after the start to be listed',
  );
  const want = await freshLists(t, dir, servers);
  t.equal(listsOf(state, servers), want, 'the list is a fresh resolution’s');
  t.equal(reads.get(flat), 1, 'the base was read once: by the start-up walk, not again');
});
