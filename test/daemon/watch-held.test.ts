/**
 * The watches a reload sets before its walk (watcher.ts `watchFirst`) against a plan already
 * under way for the snapshot before it. A plan that read the old snapshot, then saw those
 * watches released once the new one came into force, closed them as unwanted, and the next plan
 * opened them again: for that moment the daemon watched less than the policy in force named,
 * and a test counting watches read the dip. And those watches keyed as the plan keys them.
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { defaultBackend, type WatchBackend } from '../../daemon/watch-backend.js';
import { startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';
import { policy, uri, uris, WAIT_MS } from '../helpers/watch-session.js';

/** The default backend, counting the directory watches it opens, by path. */
function counting() {
  const opens = new Map<string, number>();
  const backend: WatchBackend = {
    dir: (path, depth, onEvent, onError, enters) => {
      opens.set(path, (opens.get(path) ?? 0) + 1);
      return defaultBackend.dir(path, depth, onEvent, onError, enters);
    },
    recursive: (path, ignore, onEvent, onError) =>
      defaultBackend.recursive(path, ignore, onEvent, onError),
  };
  const total = () => [...opens.values()].reduce((a, b) => a + b, 0);
  return { opens, backend, total };
}

void t.test('a plan under way never closes the watches a reload set before its walk', async (t) => {
  const { opens, backend } = counting();
  const d = await startDaemon(t, undefined, { watchBackend: backend });
  const named = ['g1', 'g2', 'g3'];
  for (const dir of ['busy', ...named]) mkdirSync(join(d.dir, dir));
  const busy = `${d.dir}/busy/*`;
  // A root 80 levels down, past a link: each plan looks for the links on the way to it one
  // level at a time, so a plan reads long enough for the reload below to come into force
  // meanwhile (without the fix, most cycles of 0-5 ms closed the g* watches; without this
  // root, one in 60).
  const levels = Array.from({ length: 80 }, (_, k) => `l${k}`);
  mkdirSync(join(d.dir, 'real', ...levels), { recursive: true });
  symlinkSync(join(d.dir, 'real'), join(d.dir, 'via'));
  const deep = join(d.dir, 'via', ...levels);
  const c = await d.connect();
  const idle = () => waitFor(() => d.daemon.watcher.isIdle(), WAIT_MS, 'the watcher idle');

  // Each cycle: a directory made under a root starts a plan of the snapshot in force (no g*),
  // and a reload that names the g* roots comes into force while that plan may still be reading.
  // The delays sweep the reload across the plan's reading.
  const cycles = 16;
  let without = 0;
  const kept: number[] = [];
  const watching = async () => (await c.status()).watches.directories;
  for (let i = 0; i < cycles; i++) {
    d.writePolicy(policy([busy, deep]));
    await c.reload();
    await idle();
    // None is kept once the policy stops naming it.
    if (i === 0) without = await watching();
    else if ((await watching()) !== without) kept.push(i);
    mkdirSync(join(d.dir, 'busy', `n${i}`));
    await new Promise((r) => setTimeout(r, i % 8));
    d.writePolicy(policy([busy, deep, ...named.map((g) => `${d.dir}/${g}/*`)]));
    await c.reload();
    await idle();
  }
  t.same(kept, [], 'the g* watches closed in every cycle once the policy stopped naming them');
  for (const g of named) {
    t.equal(opens.get(join(d.dir, g)), cycles, `${g} opened once per cycle, never closed between`);
  }
});

void t.test('a reload of a root reached through a link opens no watch of its own', async (t) => {
  // The reload sets its roots' watches before its walk, keyed as the plan keys them: by where
  // the link leads. Keyed by the name alone, each reload opened one more watch of `h/lnk`, and
  // the plan after it closed that one again.
  const { backend, total } = counting();
  const d = await startDaemon(t, undefined, { watchBackend: backend });
  for (const dir of ['h', 'r1/a']) mkdirSync(join(d.dir, dir), { recursive: true });
  symlinkSync(join(d.dir, 'r1'), join(d.dir, 'h', 'lnk'));
  d.writePolicy(policy([`${d.dir}/h/lnk/*`]));
  const c = await d.connect();
  const idle = () => waitFor(() => d.daemon.watcher.isIdle(), WAIT_MS, 'the watcher idle');
  await c.reload();
  await idle();
  const before = total();
  for (let i = 0; i < 3; i++) {
    t.equal((await c.reload()).ok, true);
    await idle();
  }
  t.equal(total(), before, 'no watch opened by three reloads of the same policy');
  t.same(uris(await c.listRoots('fs')), [uri(join(d.dir, 'r1', 'a'))]);
});
