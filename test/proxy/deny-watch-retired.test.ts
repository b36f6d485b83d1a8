/**
 * Watches the deny watch gives up (proxy/deny-watch.ts, `WatchSet.retired`). **Was a hole, found
 * by an attacker pass:** libuv drops, without a word, every event still queued for a watch it no
 * longer has, and the flood guard (common/watch-flood.ts) learns of an overflow of the kernel's
 * queue only by counting what reaches the listeners. A sandboxed server renamed a watched
 * directory (whose watch the proxy closed on reading the rename), made more events in it than
 * the kernel queues, while the proxy was busy reading a line of 8 MB, and then made a denied file
 * or planted git hooks: the overflow lost their events, and the guard, which had counted two,
 * saw nothing (20 of 20 tries). Now a watch given up stays open, deaf, so that its queued events
 * are counted; past a limit the server is stopped, and the watches close once the roots are
 * watched afresh.
 *
 * Here this test's own loop stands for the busy proxy: everything between the rename and the
 * plant is synchronous, so no event is read meanwhile.
 */
import { execFileSync } from 'node:child_process';
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { watchedRoot } from '../helpers/deny-watch.js';
import { waitFor } from '../helpers/poll.js';

/** How many events the kernel queues for one inotify instance (the guard's own figure). */
const QUEUED = Number.parseInt(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'), 10);

/** More events in `dir` than the kernel queues, on two files made there first. */
function flood(dir: string, how: 'times' | 'names'): void {
  for (let i = 0; i < QUEUED + 100; i++) {
    if (how === 'times') utimesSync(join(dir, i % 2 ? 'a' : 'b'), i, i);
    else if (i % 2) unlinkSync(join(dir, 'c'));
    else writeFileSync(join(dir, 'c'), '');
  }
}

const cases = [
  ['renamed within the roots, times changed in it', 'P/E', 'times'],
  ['renamed within the roots, names made and removed in it', 'P/E', 'names'],
  ['renamed to a denied name (not watched again)', 'P/private', 'times'],
] as const;

for (const [what, to, how] of cases) {
  void t.test(`a directory ${what}, flooded behind its rename: fails closed`, async (t) => {
    const w = await watchedRoot(t, [{ pattern: '**/private', access: 'all' }]);
    mkdirSync(join(w.root, 'P', 'D'), { recursive: true });
    for (const f of ['a', 'b']) writeFileSync(join(w.root, 'P', 'D', f), '');
    await w.quietNow();
    const before = w.reports.length;
    renameSync(join(w.root, 'P', 'D'), join(w.root, to));
    flood(join(w.root, to), how);
    const env = join(w.root, 'P', '.env');
    writeFileSync(env, 'secret');
    // Either the .env is seen, or the events behind the flood are known lost (the server is
    // stopped, and the next plan walks afresh).
    await waitFor(
      () => w.reports.slice(before).some((d) => d.path === env || /came faster/.test(d.why ?? '')),
      30_000,
      'the .env, or the flood',
    );
    t.pass('the watch saw the .env or failed closed');
  });
}

void t.test(
  'git hooks planted behind such a flood: handed on, or the watch fails closed',
  async (t) => {
    const w = await watchedRoot(t, [], (r) => {
      mkdirSync(join(r, 'repo', '.git', 'objects'), { recursive: true });
      mkdirSync(join(r, 'repo', '.git', 'refs'));
      writeFileSync(join(r, 'repo', '.git', 'HEAD'), 'ref: refs/heads/main\n');
      writeFileSync(join(r, 'repo', '.git', 'config'), '[core]\n');
    });
    mkdirSync(join(w.root, 'P', 'D'), { recursive: true });
    for (const f of ['a', 'b']) writeFileSync(join(w.root, 'P', 'D', f), '');
    await w.quietNow();
    const before = w.reports.length;
    renameSync(join(w.root, 'P', 'D'), join(w.root, 'P', 'E'));
    flood(join(w.root, 'P', 'E'), 'times');
    mkdirSync(join(w.root, 'repo', '.git', 'hooks'));
    await waitFor(
      () =>
        w.planted.length > 0 ||
        w.reports.slice(before).some((d) => /came faster/.test(d.why ?? '')),
      30_000,
      'the hooks handed on, or the flood',
    );
    if (w.planted.length === 0) {
      // The next plan's walk finds what the lost events would have shown.
      await w.dw.update(w.roots);
    }
    t.same(w.planted, [join(w.root, 'repo', '.git', 'hooks')], 'the planted hooks are handed on');
  },
);

void t.test(
  'past the limit on retired watches, the server is stopped, and the next plan closes them',
  async (t) => {
    const w = await watchedRoot(t, [], () => {}, '', { maxRetired: 20 });
    for (let i = 0; i < 25; i++) mkdirSync(join(w.root, `d${i}`));
    await w.quietNow();
    // A directory renamed keeps its one watch: given up under the old name, and retired.
    renameSync(join(w.root, 'd0'), join(w.root, 'moved'));
    writeFileSync(join(w.root, 'moved', 'x.secret'), '');
    await waitFor(() => w.count(join(w.root, 'moved', 'x.secret')) === 1, 30_000, 'followed');
    t.notOk(
      w.reports.some((d) => /went away/.test(d.why ?? '')),
      'a few: nothing said',
    );
    for (let i = 1; i < 25; i++) rmSync(join(w.root, `d${i}`), { recursive: true });
    await waitFor(() => w.reports.some((d) => /went away/.test(d.why ?? '')), 30_000, 'the limit');
    const limit = w.reports.find((d) => /went away/.test(d.why ?? ''))!;
    t.match(limit.why, /more than 20 watched directories went away or moved/);
    t.equal(limit.access, 'all', 'the server is stopped at once');
    // The next plan walks the roots afresh, and closes them: the count begins again.
    await w.dw.update(w.roots);
    const reported = w.reports.length;
    for (let i = 0; i < 10; i++) mkdirSync(join(w.root, `e${i}`));
    await w.quietNow();
    for (let i = 0; i < 10; i++) rmSync(join(w.root, `e${i}`), { recursive: true });
    await w.quietNow();
    t.notOk(
      w.reports.slice(reported).some((d) => /went away/.test(d.why ?? '')),
      'within the limit again',
    );
  },
);

void t.test('a watch of what is not a directory is retired too, not closed', async (t) => {
  // **A hole, found by the next attacker pass:** a directory the walk read as one, swapped for a
  // file before its watch was set, had that watch closed at once; the IN_IGNORED the close
  // queued reached no listener, so a full queue counted one short, the guard did not trip, and
  // what came after the overflow went unseen.
  const w = await watchedRoot(t);
  for (const f of ['a', 'b']) writeFileSync(join(w.root, f), '');
  const tree = join(w.root, 'T');
  mkdirSync(join(tree, 'b0'), { recursive: true });
  mkdirSync(join(tree, 'b1'));
  const order = readdirSync(tree);
  let deep = join(tree, order[0]!);
  for (let i = 0; i < 150; i++) mkdirSync((deep = join(deep, 'd')));
  await w.quietNow();
  const before = w.reports.length;
  renameSync(tree, join(w.root, 'T2'));
  // Once the walk of the new name is below its first entry, the other becomes a file.
  const watching = (w.dw as unknown as { current: { watchers: Map<string, unknown> } }).current;
  await waitFor(() => watching.watchers.has(join(w.root, 'T2', order[0]!, 'd')), 10_000, 'below');
  rmdirSync(join(w.root, 'T2', order[1]!));
  writeFileSync(join(w.root, 'T2', order[1]!), '');
  await w.dw.settled();
  // This loop reads no event from here: the queue overflows, and then the .env is made.
  for (let i = 0; i < QUEUED + 100; i++) utimesSync(join(w.root, i % 2 ? 'a' : 'b'), i, i);
  const env = join(w.root, '.env');
  writeFileSync(env, 'secret');
  await waitFor(
    () => w.reports.slice(before).some((d) => d.path === env || /came faster/.test(d.why ?? '')),
    30_000,
    'the .env, or the flood',
  );
  t.pass('the .env is seen, or the watch fails closed');
});

void t.test('a watched directory replaced by a file does not throw in the listener', async (t) => {
  // **A hole, found by the same pass:** the lstat of `D/D` (is the watch's own name an entry of
  // it?) threw ENOTDIR, which `throwIfNoEntry: false` does not cover, out of the watch's
  // listener: the proxy ended, and the host's session with it. Any server could do it.
  const thrown: unknown[] = [];
  const onError = (err: unknown) => thrown.push(err);
  process.on('uncaughtException', onError);
  t.teardown(() => process.off('uncaughtException', onError));
  const w = await watchedRoot(t);
  mkdirSync(join(w.root, 'D'));
  await w.quietNow();
  rmdirSync(join(w.root, 'D'));
  writeFileSync(join(w.root, 'D'), '');
  await w.quietNow();
  t.same(thrown, [], 'nothing escaped');
});

void t.test(
  'a path too long to name does not throw in the listener, and fails closed',
  async (t) => {
    // **A hole, found by an attacker pass:** a tree deeper than PATH_MAX (made by relative mkdir)
    // made every lstat of the watch throw ENAMETOOLONG: out of a listener it ended the proxy, and
    // at the next start the first walk threw, every session.
    const thrown: unknown[] = [];
    const onError = (err: unknown) => thrown.push(err);
    process.on('uncaughtException', onError);
    t.teardown(() => process.off('uncaughtException', onError));
    const w = await watchedRoot(t);
    const top = join(w.root, 'deep');
    t.teardown(() => execFileSync('rm', ['-rf', top]));
    const level = 'x'.repeat(200);
    execFileSync(
      'bash',
      ['-c', `mkdir deep && cd deep && for i in $(seq 24); do mkdir ${level} && cd ${level}; done`],
      {
        cwd: w.root,
      },
    );
    await waitFor(
      () => w.reports.some((d) => /cannot watch|could not be handled/.test(d.why ?? '')),
      30_000,
      'the watch failing closed',
    );
    await w.dw.settled();
    t.same(thrown, [], 'nothing escaped');
    // The next plan's walk says why the server must not start, rather than throw.
    await w.dw.update(w.roots);
    t.match(w.dw.blindSpot(), /cannot watch .*ENAMETOOLONG|name too long/i, 'the start is refused');
  },
);
