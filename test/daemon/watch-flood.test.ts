/**
 * A watch flooded with events (common/watch-flood.ts). libuv reads inotify's queue until it is
 * empty before the event loop goes on, so a process changing a watched directory faster than
 * the listeners handle its events held the loop for as long as it ran: the daemon answered
 * nothing. Each backend now closes a flooded watch and reports it; the daemon keeps answering,
 * rescans the directory instead, and watches it by events again once the flood ends.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { defaultBackend, degradeCode } from '../../daemon/watch-backend.js';
import type { OnError, OnEvent, WatchHandle } from '../../daemon/watch-dir.js';
import { overflowThenMake, slowWatch, startFlood } from '../helpers/flood.js';
import { waitFor } from '../helpers/poll.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { policy, setup, uri, uris, waitForList, WAIT_MS } from '../helpers/watch-session.js';

/**
 * How long each flood runs at most, stopped once its checks are done: a check made while it
 * still runs shows the loop went on.
 */
const FLOOD_SECONDS = 15;

type Open = (dir: string, onEvent: OnEvent, onError: OnError) => Promise<WatchHandle>;
const backends: [string, Open][] = [
  ['one directory (fs.watch)', (dir, ev, err) => defaultBackend.dir(dir, 0, ev, err)],
  ['to a depth', (dir, ev, err) => defaultBackend.dir(dir, 2, ev, err)],
  ['a tree (a watch per directory)', (dir, ev, err) => defaultBackend.recursive(dir, [], ev, err)],
];

for (const [name, open] of backends) {
  void t.test(`${name}: a flooded watch is closed and the loop goes on`, async (t) => {
    const dir = realpathSync(ownedShortDir(t));
    mkdirSync(join(dir, 'sub'));
    const errors: Error[] = [];
    const handle = await open(
      dir,
      () => {},
      (err) => errors.push(err),
    );
    t.teardown(() => handle.close());
    slowWatch(t, dir);
    const flood = startFlood(t, dir, FLOOD_SECONDS);
    // The test's own timers run only while the loop goes on.
    await waitFor(() => errors.length > 0, WAIT_MS, 'the flood reported');
    t.ok(flood.running(), 'reported while the flood still runs');
    t.equal(degradeCode(errors[0]), 'FLOOD', 'as a flood');
    await new Promise((r) => setTimeout(r, 200));
    t.ok(flood.running(), 'a timer fired while the flood still runs');
    t.equal(errors.length, 1, 'reported once: the watch is closed');
    await flood.stop();
  });
}

void t.test('a daemon answers through a flood in a root, then watches it again', async (t) => {
  const { d, c, first } = await setup(t, ['w'], (dir) => {
    mkdirSync(join(dir, 'w', 'one'));
    return `version: 1\nservers:\n  fs:\n    roots:\n      - path: "${dir}/w/*"\n`;
  });
  const w = join(d.dir, 'w');
  t.same(uris(first), [uri(join(w, 'one'))]);
  // The daemon runs in this process: its watch of `w` and this one read the same events.
  slowWatch(t, w);
  const flood = startFlood(t, w, FLOOD_SECONDS);
  await waitFor(
    async () => (await c.status()).watches.degraded.includes(w),
    WAIT_MS,
    'the flooded root rescanned instead of watched',
  );
  t.ok(flood.running(), 'status answered while the flood runs');
  for (let i = 0; i < 5; i++) {
    t.same(uris(await c.listRoots('fs')), [uri(join(w, 'one'))], `list ${i} answered`);
    const r = await c.check('fs', join(w, 'one', 'x'));
    t.equal(r.allowed, true, `check ${i} answered`);
  }
  t.ok(flood.running(), 'every answer came while the flood runs');
  // A directory made during the flood is found by the rescans.
  mkdirSync(join(w, 'two'));
  await waitForList(c, (u) => u.includes(uri(join(w, 'two'))));
  t.ok(flood.running(), 'found while the flood runs');
  await flood.stop();
  await waitFor(
    async () => (await c.status()).watches.mode === 'events',
    WAIT_MS,
    'watched by events again',
  );
  mkdirSync(join(w, 'three'));
  const ev = await waitForList(c, (u) => u.includes(uri(join(w, 'three'))));
  t.same(uris(ev).sort(), ['one', 'three', 'two'].map((n) => uri(join(w, n))).sort());
});

void t.test('a queue overflow in a root: what came after it is found', async (t) => {
  // The daemon runs in this process: the synchronous child holds its loop too.
  const { d, c, first } = await setup(t, ['w'], (dir) => policy([`${dir}/w/*`]));
  const w = join(d.dir, 'w');
  t.same(first.roots, []);
  overflowThenMake(w, (dir) => mkdirSync(join(dir, 'late')));
  const ev = await waitForList(c, (u) => u.includes(uri(join(w, 'late'))));
  t.same(uris(ev), [uri(join(w, 'late'))], 'the directory made past the overflow is a root');
});
