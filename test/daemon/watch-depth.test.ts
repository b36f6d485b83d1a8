/**
 * The depth-limited watch (a glob below its base, `base/keep*\/src/*`): the tree of watch-tree.ts
 * cut to the glob's depth and to the directories it could enter. chokidar did this before, and
 * its faults are the cases here: a burst of swaps left a stale `fs.watch` of a replaced
 * directory shared by later watches; a directory moved away and back stayed unwatched; a watch
 * closed in the moment after it made an `fs.watch` dropped that `fs.watch`, which then held the
 * process open (the daemon's tests hung at their end about one run in fifty); and each file under
 * the base took an inotify watch of its own.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { defaultBackend } from '../../daemon/watch-backend.js';
import type { WatchEvent, WatchHandle } from '../../daemon/watch-dir.js';
import { poll, waitFor } from '../helpers/poll.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { wrapWatch } from '../helpers/watch-fault.js';

/** The `fs.watch` handles this process holds. */
const fsWatches = () =>
  process.getActiveResourcesInfo().filter((name) => name === 'FSEventWrap').length;

/** A watch of `base` as for `base/keep*\/src/*` (only `keep*` and below), with what it reports. */
async function watchKeep(t: Test, base: string) {
  const events: WatchEvent[] = [];
  const errors: Error[] = [];
  const handle = await defaultBackend.dir(
    base,
    2,
    (e) => events.push(e),
    (err) => errors.push(err),
    (names) => names[0]!.startsWith('keep'),
  );
  // Closed by the test; closed here too when an assertion ended the test first, so that its
  // watches are not counted by the next one.
  t.teardown(() => handle.close());
  return { events, errors, handle };
}

/**
 * Whether `made` is among `events`: by name, or within a directory above it that the watch
 * walked afresh after the mkdir (the events of a swap can make it do so late), reported as
 * created: the daemon then looks at that directory's whole subtree (watch-tree.ts).
 */
const reported = (events: WatchEvent[], made: string) =>
  events.some((e) => e.path === made || (e.kind === 'create' && made.startsWith(`${e.path}/`)));

void t.test('bursts of swaps leave the newcomer watched and nothing open', async (t) => {
  const base = join(ownedShortDir(t), 'base');
  mkdirSync(join(base, 'keep1/src/x'), { recursive: true });
  mkdirSync(join(base, 'other/src'), { recursive: true });
  const before = fsWatches();
  const { events, errors, handle } = await watchKeep(t, base);
  for (let round = 1; round <= 6; round++) {
    // Twenty swaps back to back (an even number: `keep1` is the newcomer each time).
    for (let i = 0; i < 20; i++) {
      renameSync(join(base, 'keep1'), join(base, 'tmp'));
      renameSync(join(base, 'other'), join(base, 'keep1'));
      renameSync(join(base, 'tmp'), join(base, 'other'));
    }
    await new Promise((r) => setTimeout(r, 150));
    const made = join(base, `keep1/src/n${round}`);
    const from = events.length;
    mkdirSync(made);
    await waitFor(
      () => reported(events.slice(from), made),
      10_000,
      `round ${round}: a directory made in the one swapped in is reported`,
    );
  }
  await handle.close();
  await poll(() => fsWatches() === before, 2_000);
  t.equal(fsWatches(), before, 'no fs.watch is left open once the watch is closed');
  t.same(errors, [], 'no error');
});

void t.test('closed in the moment after any watch is made, it leaves none open', async (t) => {
  // The close lands after an `fs.watch` is made and before the code that made it resumes (a
  // microtask later): chokidar dropped that watch there. Tried at each watch a growth makes.
  const made = ['keep2/src', 'keep3/src', 'keep4/src'];
  /** The handle to close after the `at`-th watch made from now on. */
  let armed: { handle: WatchHandle; at: number; seen: number } | undefined;
  const closed: { closing?: Promise<void> } = {};
  /** Read through a call: the flow analysis cannot see the hook assign it. */
  const closing = () => closed.closing;
  wrapWatch(t, {
    after: () => {
      if (armed === undefined || ++armed.seen !== armed.at) return;
      const { handle } = armed;
      armed = undefined;
      queueMicrotask(() => {
        closed.closing = handle.close();
      });
    },
  });
  for (let at = 1; at <= made.length * 2; at++) {
    const base = join(ownedShortDir(t), 'base');
    mkdirSync(join(base, 'keep1/src'), { recursive: true });
    const before = fsWatches();
    const { handle } = await watchKeep(t, base);
    closed.closing = undefined;
    armed = { handle, at, seen: 0 };
    for (const m of made) mkdirSync(join(base, m), { recursive: true });
    await waitFor(() => closing() !== undefined, 10_000, `watch ${at} made, and closed`);
    await closing();
    await poll(() => fsWatches() === before, 2_000);
    t.equal(fsWatches(), before, `closed after watch ${at}: no fs.watch left open`);
  }
});

void t.test('the directory moved away and back is watched again', async (t) => {
  // chokidar, finding the directory it watches gone, dropped its watches of it and kept none
  // when it came back; the same inode back at the path was taken for a watch still in place.
  // Now it is either still watched (back before the watch looked) or reported lost (the daemon
  // then plans the watch afresh). Away for a moment, then long enough for the watch to look.
  for (const away of [0, 50, 300, 0, 300]) {
    const dir = ownedShortDir(t);
    const base = join(dir, 'base');
    mkdirSync(join(base, 'keep1/src/x'), { recursive: true });
    const { events, errors, handle } = await watchKeep(t, base);
    renameSync(base, join(dir, 'away'));
    if (away > 0) await new Promise((r) => setTimeout(r, away));
    renameSync(join(dir, 'away'), base);
    await new Promise((r) => setTimeout(r, 500));
    const made = join(base, 'keep1/src/n');
    const from = events.length;
    mkdirSync(made);
    await waitFor(
      () => errors.length > 0 || reported(events.slice(from), made),
      5_000,
      `away ${away} ms: a directory made in it afterwards reported, or the watch reported lost`,
    );
    t.match(errors, errors.length ? [{ code: 'ENOENT' }] : [], 'lost only as gone');
    await handle.close();
  }
});

void t.test('a directory swapped while the watch is being set is watched', async (t) => {
  // A swap of `keep1` just before any of the three watches is set is seen, by the watch of the
  // new `keep1` (set by its path afterwards) or by the watch of `base` (set before). A watch that
  // set what is below a directory before the directory's own would leave the watch below on the
  // old `keep1` here.
  let base = '';
  let when = '';
  let swapped = false;
  wrapWatch(t, {
    before: (path) => {
      if (path !== when || swapped) return;
      swapped = true;
      renameSync(join(base, 'keep1'), join(base, 'old'));
      renameSync(join(base, 'spare'), join(base, 'keep1'));
    },
  });
  for (const at of ['', 'keep1', 'keep1/src']) {
    base = join(ownedShortDir(t), 'base');
    mkdirSync(join(base, 'keep1/src/x'), { recursive: true });
    mkdirSync(join(base, 'spare/src'), { recursive: true });
    swapped = false;
    when = at === '' ? base : join(base, at);
    const { events, errors, handle } = await watchKeep(t, base);
    await new Promise((r) => setTimeout(r, 500));
    const made = join(base, 'keep1/src/n');
    const from = events.length;
    mkdirSync(made);
    await waitFor(
      () => reported(events.slice(from), made),
      5_000,
      `swapped as ${at || 'base'} was being watched: a directory made in the new keep1 reported`,
    );
    t.ok(swapped, `the swap landed as ${at || 'base'} was being watched`);
    t.same(errors, [], 'no error');
    await handle.close();
  }
});

void t.test(
  'files under the base take no watch of their own, and are still reported',
  async (t) => {
    // chokidar gave each file an inotify watch of its own: 100,000 files made under a base took
    // as many of the user's watches (the same limit every program of the user shares).
    const base = join(ownedShortDir(t), 'base');
    mkdirSync(join(base, 'keep1/src'), { recursive: true });
    for (let i = 0; i < 300; i++) writeFileSync(join(base, `f${i}`), '');
    for (let i = 0; i < 300; i++) writeFileSync(join(base, 'keep1/src', `g${i}`), '');
    const before = fsWatches();
    const { events, errors, handle } = await watchKeep(t, base);
    const opened = fsWatches() - before;
    t.ok(opened <= 3, `${opened} fs.watch handles for 3 directories and 600 files`);
    const made = join(base, 'keep1/src/notes.md');
    writeFileSync(made, 'x');
    await waitFor(() => events.some((e) => e.path === made), 5_000, 'a file made is reported');
    t.same(errors, [], 'no error');
    await handle.close();
  },
);
