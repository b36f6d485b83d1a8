/**
 * The depth-limited watch (daemon/watch-depth.ts) opens itself afresh when a directory it enters
 * is renamed. A burst of renames used to start two openings at once: the second began while the
 * first was opening, the first's watcher was never closed, and its stale `fs.watch` of a
 * replaced directory was then shared by every later opening (chokidar shares one per path in a
 * process). A match made in the directory swapped in was then never seen: the daemon's swap
 * test failed about one run in eight.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { watchToDepth } from '../../daemon/watch-depth.js';
import type { WatchEvent } from '../../daemon/watch-dir.js';
import { poll, waitFor } from '../helpers/poll.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { wrapWatch } from '../helpers/watch-fault.js';

/** The `fs.watch` handles this process holds. */
const fsWatches = () =>
  process.getActiveResourcesInfo().filter((name) => name === 'FSEventWrap').length;

/** A watch of `base` as for `base/keep*\/src/*` (only `keep*` and below), with what it reports. */
async function watchKeep(base: string) {
  const events: WatchEvent[] = [];
  const errors: Error[] = [];
  const handle = await watchToDepth(
    {
      real: base,
      depth: 2,
      name: (p) => p,
      enters: (names) => names[0]!.startsWith('keep'),
      isSetupError: () => false,
    },
    (e) => events.push(e),
    (err) => errors.push(err),
  );
  return { events, errors, handle };
}

void t.test('bursts of swaps open the watch one at a time and leave nothing open', async (t) => {
  const base = join(ownedShortDir(t), 'base');
  mkdirSync(join(base, 'keep1/src/x'), { recursive: true });
  mkdirSync(join(base, 'other/src'), { recursive: true });
  const before = fsWatches();
  const { events, errors, handle } = await watchKeep(base);
  for (let round = 1; round <= 6; round++) {
    // Twenty swaps back to back (an even number: `keep1` is the newcomer each time).
    for (let i = 0; i < 20; i++) {
      renameSync(join(base, 'keep1'), join(base, 'tmp'));
      renameSync(join(base, 'other'), join(base, 'keep1'));
      renameSync(join(base, 'tmp'), join(base, 'other'));
    }
    // Past the gap between openings, so that the next burst's opening starts at once.
    await new Promise((r) => setTimeout(r, 150));
    const made = join(base, `keep1/src/n${round}`);
    const from = events.length;
    mkdirSync(made);
    // Reported by name, or by a look at the whole base (the watch opened afresh after the mkdir
    // found it in its first scan, which reports nothing by name), as the daemon takes either.
    await waitFor(
      () => events.slice(from).some((e) => e.path === made || e.path === base),
      10_000,
      `round ${round}: a directory made in the one swapped in is reported`,
    );
  }
  await handle.close();
  // Handles close asynchronously after the watcher's close resolves.
  await poll(() => fsWatches() === before, 2_000);
  t.equal(fsWatches(), before, 'no fs.watch is left open once the watch is closed');
  t.same(errors, [], 'no error');
});

void t.test('a watch opened afresh while its directory was away never goes silent', async (t) => {
  // The opening afresh (after a rename of a directory it enters) found the directory gone, and
  // looked for it; it came back as the same inode (moved away and back), so the look took it
  // for the one still watched, and nothing watched it any more. It must report the failure (the
  // daemon opens a watch afresh) or go on reporting what is made in it.
  for (let round = 1; round <= 4; round++) {
    const dir = ownedShortDir(t);
    const base = join(dir, 'base');
    mkdirSync(join(base, 'keep1/src'), { recursive: true });
    const { events, errors, handle } = await watchKeep(base);
    const reopened = async (from: number) =>
      waitFor(() => events.slice(from).some((e) => e.path === base), 10_000, 'an opening');
    // The first opening afresh comes at once; the next waits out the gap after it.
    let from = events.length;
    renameSync(join(base, 'keep1'), join(base, 'keep2'));
    await reopened(from);
    from = events.length;
    renameSync(join(base, 'keep2'), join(base, 'keep3'));
    await waitFor(() => events.length > from, 10_000, 'the rename seen');
    await new Promise((r) => setTimeout(r, 20));
    renameSync(base, join(dir, 'away'));
    await new Promise((r) => setTimeout(r, 400));
    renameSync(join(dir, 'away'), base);
    await new Promise((r) => setTimeout(r, 300));
    const made = join(base, 'keep3/src/n');
    from = events.length;
    mkdirSync(made);
    await waitFor(
      () => errors.length > 0 || events.slice(from).some((e) => e.path === made || e.path === base),
      10_000,
      `round ${round}: the failed opening reported, or the directory made seen`,
    );
    await handle.close();
  }
});

void t.test('the directory moved away and back is watched again', async (t) => {
  // chokidar, finding the directory it watches gone, drops its watches of it and keeps none
  // when it comes back; the same inode back at the path was taken for a watch still in place.
  // Away for a moment, then long enough for chokidar to look, in turns.
  for (const away of [0, 50, 300, 0, 300]) {
    const dir = ownedShortDir(t);
    const base = join(dir, 'base');
    mkdirSync(join(base, 'keep1/src/x'), { recursive: true });
    const { events, errors, handle } = await watchKeep(base);
    renameSync(base, join(dir, 'away'));
    if (away > 0) await new Promise((r) => setTimeout(r, away));
    renameSync(join(dir, 'away'), base);
    // Past the opening afresh (which reports the whole directory), so that only an event
    // naming it can report what is made next.
    await new Promise((r) => setTimeout(r, 500));
    const made = join(base, 'keep1/src/n');
    const from = events.length;
    mkdirSync(made);
    await waitFor(
      () => events.slice(from).some((e) => e.path === made),
      5_000,
      `away ${away} ms: a directory made in it afterwards reported`,
    );
    t.same(errors, [], 'no error');
    await handle.close();
  }
});

void t.test('a directory swapped while the watch is being set is watched', async (t) => {
  // chokidar lists a directory, watches it, then sets up what is below it: a swap of `keep1`
  // just before any of the three watches is set is seen, by the watch of the new `keep1` (set
  // by its path afterwards) or by the watch of `base` (set before). A chokidar that watched a
  // directory after what is below it would leave the watch below on the old `keep1` here.
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
    const { events, errors, handle } = await watchKeep(base);
    // Any opening afresh reports the whole directory: past it, only an event naming the new
    // directory reports it.
    await new Promise((r) => setTimeout(r, 500));
    const made = join(base, 'keep1/src/n');
    const from = events.length;
    mkdirSync(made);
    await waitFor(
      () => events.slice(from).some((e) => e.path === made || e.path === base),
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
    // chokidar gives each file an inotify watch of its own: 100,000 files made under a base took
    // as many of the user's watches (the same limit every program of the user shares).
    const base = join(ownedShortDir(t), 'base');
    mkdirSync(join(base, 'keep1/src'), { recursive: true });
    for (let i = 0; i < 300; i++) writeFileSync(join(base, `f${i}`), '');
    for (let i = 0; i < 300; i++) writeFileSync(join(base, 'keep1/src', `g${i}`), '');
    const before = fsWatches();
    const { events, errors, handle } = await watchKeep(base);
    const opened = fsWatches() - before;
    t.ok(opened <= 3, `${opened} fs.watch handles for 3 directories and 600 files`);
    const made = join(base, 'keep1/src/notes.md');
    writeFileSync(made, 'x');
    await waitFor(() => events.some((e) => e.path === made), 5_000, 'a file made is reported');
    t.same(errors, [], 'no error');
    await handle.close();
  },
);
