/**
 * A watch that stops watching. An `fs.watch` that reports an error is closed, and a watch opened
 * afresh that failed (chokidar's, after a swap; the per-directory one, after its directory came
 * back) left no watch in place: the daemon looked once, kept the dead handle as if it watched,
 * and what was made afterwards went unseen until the full rescan (5 minutes by default). And
 * the degraded rescans waited for their openings: one that never ended stopped them all.
 *
 * The OS does not produce these faults on demand: the first test drives Node's own error path
 * of an `fs.watch` (helpers/watch-fault.ts); the backend below is the real one with a switch
 * that can kill a handle (close its watch, then report an error) and hold an opening that
 * never ends.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { defaultBackend, type WatchBackend } from '../../daemon/watch-backend.js';
import type { OnError, WatchHandle } from '../../daemon/watch-dir.js';
import { startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';
import { watchFaults } from '../helpers/watch-fault.js';
import { policy, uri, uris, WAIT_MS } from '../helpers/watch-session.js';

/** The default backend; `kill(path)` ends the newest watch of `path` with an error. */
function faulty() {
  const live = new Map<string, { handle: WatchHandle; onError: OnError }>();
  const opens = new Map<string, number>();
  /** Openings of these paths never end, from the given count of openings on. */
  const hangFrom = new Map<string, number>();
  const backend: WatchBackend = {
    dir: async (path, depth, onEvent, onError, enters) => {
      const n = (opens.get(path) ?? 0) + 1;
      opens.set(path, n);
      const from = hangFrom.get(path);
      if (from !== undefined && n >= from) return new Promise<never>(() => {});
      const handle = await defaultBackend.dir(path, depth, onEvent, onError, enters);
      live.set(path, { handle, onError });
      return handle;
    },
    recursive: (path, ignore, onEvent, onError) =>
      defaultBackend.recursive(path, ignore, onEvent, onError),
  };
  const kill = async (path: string) => {
    const w = live.get(path);
    if (w === undefined) throw new Error(`no watch of ${path}`);
    live.delete(path);
    await w.handle.close();
    w.onError(Object.assign(new Error('EIO: i/o error, watch'), { code: 'EIO' }));
  };
  return { backend, kill, opens, hangFrom };
}

async function started(t: Test, backend: WatchBackend) {
  const d = await startDaemon(t, undefined, { watchBackend: backend });
  for (const r of ['a', 'b']) mkdirSync(join(d.dir, r));
  d.writePolicy(policy([`${d.dir}/a/*`, `${d.dir}/b/*`]));
  const c = await d.connect();
  await c.reload();
  await waitFor(() => d.daemon.watcher.isIdle(), WAIT_MS, 'the watcher idle');
  const listed = async (path: string) =>
    uris(await c.listRoots('fs')).includes(uri(join(d.dir, path)));
  return { d, c, listed };
}

void t.test('a watch that reported an error is opened afresh', async (t) => {
  // Node's own error path of an `fs.watch` (the per-directory backend's), as libuv takes it.
  const { fail, made } = watchFaults(t);
  const { d, listed } = await started(t, defaultBackend);
  const a = realpathSync(join(d.dir, 'a'));
  t.equal(fail(a), 1, "a's watch failed");
  t.ok(
    d.logs.some((l) => l.includes(`watching ${a}: EIO`)),
    'the log says which, and how',
  );
  await waitFor(() => made(a) === 2, WAIT_MS, "a's watch made afresh");
  await waitFor(() => d.daemon.watcher.status().mode === 'events', WAIT_MS, 'events again');
  await waitFor(() => d.daemon.watcher.isIdle(), WAIT_MS, 'the watcher idle');
  // Made once the new watch is in place, so only an event can bring it before the full rescan.
  mkdirSync(join(a, 'later'));
  await waitFor(() => listed('a/later'), WAIT_MS, 'a directory made after the watch came back');
});

void t.test('a watch lost in another way is opened afresh too', async (t) => {
  const f = faulty();
  const { d, listed } = await started(t, f.backend);
  const a = join(d.dir, 'a');
  t.equal(f.opens.get(a), 1);
  await f.kill(a);
  await waitFor(() => (f.opens.get(a) ?? 0) >= 2, WAIT_MS, 'the watch of a opened afresh');
  await waitFor(() => d.daemon.watcher.status().mode === 'events', WAIT_MS, 'events again');
  mkdirSync(join(a, 'later'));
  await waitFor(() => listed('a/later'), WAIT_MS, 'a directory made after the watch came back');
});

void t.test('an opening that never ends stops no rescan', async (t) => {
  const f = faulty();
  const { d, listed } = await started(t, f.backend);
  const [a, b] = [join(d.dir, 'a'), join(d.dir, 'b')];
  // `a`'s watch is opened afresh at the first degraded rescan and never comes back; `b`'s
  // comes back at once.
  f.hangFrom.set(a, 2);
  await f.kill(a);
  await f.kill(b);
  await waitFor(() => f.opens.get(a) === 2, WAIT_MS, 'the opening of a under way');
  mkdirSync(join(a, 'while'));
  await waitFor(() => listed('a/while'), WAIT_MS, "a directory under the hung watch's root");
  t.equal(f.opens.get(a), 2, 'no second opening beside the hung one');
  mkdirSync(join(b, 'after'));
  await waitFor(() => listed('b/after'), WAIT_MS, 'a directory under the other root');
  t.same(d.daemon.watcher.status().degraded, [a], 'only the hung watch is degraded');
});
