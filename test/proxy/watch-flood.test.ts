/**
 * A sandboxed server's roots flooded with events (common/watch-flood.ts), in the proxy: its
 * watches for denied paths (proxy/deny-watch.ts) and for include bases (proxy/include-watch.ts)
 * read nothing behind a flood, a denied path made meanwhile included. The flooded watch is
 * closed and reported as a change that stops the server, and the next plan (`update`) sets
 * every watch afresh. Real directories, real inotify watches, in this process.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { FLOOD_EVENTS, FLOOD_TURN_MS, flooded } from '../../common/watch-flood.js';
import { watchedRoot } from '../helpers/deny-watch.js';
import { overflowThenMake, slowWatch, startFlood } from '../helpers/flood.js';
import { watchedIncludes } from '../helpers/include-watch.js';
import { waitFor } from '../helpers/poll.js';

const isFlood = (why: string | undefined) => why?.includes('came faster') === true;

void t.test(
  'denied paths: a flood in a root stops the server, the next plan watches it',
  async (t) => {
    const { r, roots, reports, dw } = await watchedRoot(t);
    slowWatch(t, r);
    const flood = startFlood(t, r, 15);
    // The test's own timers run only while the loop goes on.
    await waitFor(() => reports.some((d) => isFlood(d.why)), 30_000, 'the flood reported');
    t.ok(flood.running(), 'reported while the flood still runs');
    const report = reports.find((d) => isFlood(d.why))!;
    t.equal(report.path, r, 'the flooded directory');
    t.equal(report.access, 'all', 'as a path denied for reading: the server is stopped at once');
    await flood.stop();
    // The supervisor's next plan: the same roots and denies, watched afresh (the flooded
    // directory's watch was closed).
    await dw.update(roots);
    writeFileSync(join(r, '.env'), 'made after the flood');
    await waitFor(
      () => reports.some((d) => d.path === join(r, '.env')),
      30_000,
      'a denied path made after the flood reported',
    );
  },
);

void t.test('denied paths: a queue overflow hides no denied path', async (t) => {
  const { r, reports } = await watchedRoot(t);
  // `.env`'s event is lost past the queue's end: only the number of events read in one turn
  // tells, and it is reported as a flood (each listener is quick enough not to be one by time).
  overflowThenMake(r, (dir) => writeFileSync(join(dir, '.env'), 'made past the overflow'));
  await waitFor(
    () => reports.some((d) => d.path === join(r, '.env') || isFlood(d.why)),
    30_000,
    'the denied path, or the flood, reported',
  );
  t.pass('the server is stopped');
});

void t.test('include bases: a flood in a directory on the way is a change', async (t) => {
  const { r, roots, changed, iw } = await watchedIncludes(t);
  // The listener's few instructions outrun a flood on most machines: the turn is spent here
  // instead, in a timer, before the loop reads the event this writes (timers come first).
  await new Promise<void>((resolve) =>
    setTimeout(() => {
      writeFileSync(join(r, 'unrelated'), '');
      const start = performance.now();
      for (let i = 0; i <= FLOOD_EVENTS; i++) flooded();
      while (performance.now() - start <= FLOOD_TURN_MS) {
        // the turn spent
      }
      resolve();
    }, 0),
  );
  await waitFor(() => changed.length > 0, 30_000, 'the flood reported');
  t.same(changed, [r], 'the flooded directory, as a change');
  // The next plan sets the watch again: the base moved is a change.
  await iw.update(roots);
  renameSync(join(r, 'conf.d'), join(r, 'conf.old'));
  await waitFor(
    () => changed.includes(join(r, 'conf.d')),
    30_000,
    'the base moved after the flood reported',
  );
});
