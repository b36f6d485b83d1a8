/**
 * Watching root directories: globs and plain roots appearing and disappearing, roots created
 * the moment a reload returns, expiry by the clock, changes that alter no list, watches released,
 * and a watch that cannot be set (the policy's own files are in watch.test.ts).
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { defaultBackend, type WatchBackend } from '../../daemon/watch-backend.js';
import type { ListChangedParams } from '../../protocol/methods.js';
import type { RootsClient } from '../../protocol/client.js';
import { nextEvent, startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';
import {
  logCount,
  none,
  policy,
  setup,
  until,
  uri,
  uris,
  waitForList,
  WAIT_MS,
} from '../helpers/watch-session.js';

void t.test('directories matching dir/* and dir/**/x appear and disappear', async (t) => {
  const { d, c, first } = await setup(t, ['g', 'r'], (dir) =>
    policy([`${dir}/g/*`, `${dir}/r/**/x`]),
  );
  t.same(first.roots, []);
  const one = join(d.dir, 'g', 'one');
  const x = join(d.dir, 'r', 'a', 'b', 'x');

  mkdirSync(one);
  let ev = await waitForList(c, (u) => u.includes(uri(one)));
  t.same(uris(ev), [uri(one)], 'dir/* match appears');

  mkdirSync(x, { recursive: true });
  ev = await waitForList(c, (u) => u.includes(uri(x)));
  t.same(uris(ev), [uri(one), uri(x)], 'dir/**/x match appears');

  const xUri = uri(x);
  rmSync(join(d.dir, 'r', 'a'), { recursive: true });
  ev = await waitForList(c, (u) => !u.includes(xUri));
  t.same(uris(ev), [uri(one)], 'dir/**/x match disappears');

  const oneUri = uri(one);
  rmSync(one, { recursive: true });
  ev = await waitForList(c, (u) => !u.includes(oneUri));
  t.same(ev.roots, [], 'dir/* match disappears');
});

void t.test('a plain root created after start appears, even several levels down', async (t) => {
  const { d, c, first } = await setup(t, [], (dir) =>
    policy([`${dir}/late`, `${dir}/deep/er/still`]),
  );
  t.same(first.roots, []);
  mkdirSync(join(d.dir, 'late'));
  let ev = await waitForList(c, (u) => u.length === 1);
  t.same(uris(ev), [uri(join(d.dir, 'late'))]);
  mkdirSync(join(d.dir, 'deep'));
  mkdirSync(join(d.dir, 'deep', 'er'));
  mkdirSync(join(d.dir, 'deep', 'er', 'still'));
  ev = await waitForList(c, (u) => u.length === 2);
  t.same(uris(ev), [uri(join(d.dir, 'deep/er/still')), uri(join(d.dir, 'late'))]);
});

/** Resolve once `fs`'s list satisfies `pred`: now (subscribing) or by a later notification. */
async function eventually(c: RootsClient, pred: (uris: string[]) => boolean): Promise<string[]> {
  const later = waitForList(c, pred);
  const now = uris(await c.listRoots('fs', { subscribe: true }));
  if (pred(now)) {
    later.catch(() => undefined);
    return now;
  }
  return uris(await later);
}

void t.test('roots created the moment a reload returns are not missed', async (t) => {
  // The policy's own directory is watched before the reload; the reload makes it a root's
  // parent too. What is created before the watch takes on that role must still be seen.
  const cases: { name: string; roots: string[]; make: string[]; expect: string[] }[] = [
    { name: 'a plain root', roots: ['late'], make: ['late'], expect: ['late'] },
    {
      name: 'a plain root three levels down, mkdir -p',
      roots: ['deep/er/still'],
      make: ['deep/er/still'],
      expect: ['deep/er/still'],
    },
    { name: 'a dir/* match', roots: ['*'], make: ['one'], expect: ['one'] },
    { name: 'a dir/**/x match', roots: ['**/x'], make: ['a/b/x'], expect: ['a/b/x'] },
  ];
  for (const k of cases) {
    const d = await startDaemon(t, undefined);
    const top = d.dir;
    d.writePolicy(policy(k.roots.map((r) => `${top}/${r}`)));
    const c = await d.connect();
    await c.reload();
    for (const m of k.make) mkdirSync(join(top, m), { recursive: true });
    const want = k.expect.map((e) => uri(join(top, e)));
    const got = await eventually(c, (u) => want.every((w) => u.includes(w)));
    t.ok(
      want.every((w) => got.includes(w)),
      k.name,
    );
  }
});

// How soon after its expiry a root goes is a speed promise: bench/ measures it. Here: it goes,
// by itself (no event but the clock), and not before its time.
void t.test('a root expiring 2 s after start disappears, not before its time', async (t) => {
  const expires = Date.now() + 2000;
  const { c, first } = await setup(t, ['a', 'b'], (dir) =>
    policy([`${dir}/a`, { path: `${dir}/b`, expires: new Date(expires).toISOString() }]),
  );
  t.equal(first.roots.length, 2);
  const ev = await nextEvent<ListChangedParams>(c, 'list_changed', WAIT_MS);
  const late = Date.now() - expires;
  t.equal(ev.roots.length, 1, 'the expired root is gone');
  t.ok(late >= 0, `not before its expiry (${late} ms after it)`);
});

void t.test('a change that alters no list sends nothing', async (t) => {
  const { d, c } = await setup(t, ['g', 'g/one', 'plain'], (dir) =>
    policy([`${dir}/g/*`, `${dir}/plain`]),
  );
  const n = await none(c, async () => {
    const before = logCount(d, 'recomputing (directories changed)');
    writeFileSync(join(d.dir, 'g', 'file.txt'), 'not a directory');
    writeFileSync(join(d.dir, 'plain', 'inside.txt'), 'inside a root');
    await until('a recompute', () => logCount(d, 'recomputing (directories changed)') > before);
    const loads = logCount(d, 'policy loaded (file changed)');
    writeFileSync(d.config, `# a comment\n${policy([`${d.dir}/g/*`, `${d.dir}/plain`])}`);
    await until('the reload', () => logCount(d, 'policy loaded (file changed)') > loads);
  });
  t.equal(n, 0, 'no notification');
});

void t.test('watches are released when the policy stops naming a directory', async (t) => {
  const { d, c } = await setup(t, ['g1', 'g2/sub', 'g3'], (dir) =>
    policy([`${dir}/g1/*`, `${dir}/g2/*/x`, `${dir}/g3/**/y`]),
  );
  // g1, g2 (to depth 1), g3 (recursive), and the policy and grants directories; one more once
  // the state directory exists (the decision log creates it on its first line).
  await until('every watch set', async () => (await c.status()).watches.directories >= 4);
  const many = (await c.status()).watches.directories;
  writeFileSync(d.config, policy([`${d.dir}/g1/*`]));
  await until('fewer watches', async () => (await c.status()).watches.directories < many);
  const few = (await c.status()).watches;
  t.ok(few.directories < many, `${many} -> ${few.directories} directories`);
  t.equal(few.mode, 'events');
});

void t.test('a watch that cannot be set is rescanned, listed, and recovers', async (t) => {
  let allow = false;
  const backend: WatchBackend = {
    dir: (path, depth, onEvent, onError) =>
      !allow && path.endsWith('/blocked')
        ? Promise.reject(
            Object.assign(
              new Error(
                `ENOSPC: System limit for number of file watchers reached, watch '${path}'`,
              ),
              {
                code: 'ENOSPC',
              },
            ),
          )
        : defaultBackend.dir(path, depth, onEvent, onError),
    recursive: (path, ignore, onEvent, onError) =>
      defaultBackend.recursive(path, ignore, onEvent, onError),
  };
  const d = await startDaemon(t, undefined, { watchBackend: backend });
  mkdirSync(join(d.dir, 'blocked'));
  d.writePolicy(policy([`${d.dir}/blocked/*`]));
  const c = await d.connect();
  await c.reload();
  await c.listRoots('fs', { subscribe: true });
  const blocked = join(d.dir, 'blocked');
  await until('the degraded path in status', async () =>
    (await c.status()).watches.degraded.includes(blocked),
  );
  const status = await c.status();
  t.equal(status.watches.mode, 'degraded');
  t.same(status.watches.degraded, [blocked]);

  mkdirSync(join(blocked, 'one'));
  const ev = await waitForList(c, (u) => u.length === 1);
  t.same(uris(ev), [uri(join(blocked, 'one'))], 'found by the degraded rescan');
  t.equal(logCount(d, 'fs.inotify.max_user_watches=524288'), 1, 'the fix is logged once');

  allow = true;
  await until('events again', async () => (await c.status()).watches.mode === 'events');
  t.same((await c.status()).watches.degraded, []);
  t.equal(logCount(d, `watching ${blocked} by events again`), 1);
  mkdirSync(join(blocked, 'two'));
  const ev2 = await waitForList(c, (u) => u.length === 2);
  t.equal(ev2.roots.length, 2, 'followed by events again');
});

/**
 * A daemon on `h/lnk/*` with `h/lnk` a link to `r1` (holding `a`; `r2` holds `b`), once the plan
 * after the policy's load watches `h`, where the link lies.
 */
async function linkedRoot(t: Test) {
  const { d, c, first } = await setup(t, ['h', 'r1/a', 'r2/b'], (dir) => {
    symlinkSync(join(dir, 'r1'), join(dir, 'h', 'lnk'));
    return policy([`${dir}/h/lnk/*`]);
  });
  t.same(uris(first), [uri(join(d.dir, 'r1', 'a'))]);
  await waitFor(() => d.daemon.watcher.isIdle(), WAIT_MS, 'the watcher idle');
  return { d, c };
}

void t.test("a link on the way to a root's directory re-pointed: seen at once", async (t) => {
  const { d, c } = await linkedRoot(t);
  // Re-pointed, nothing else moving: the link's own event, in `h`, is all there is to see. The
  // base was pinned where it led (docs/policy.md): it now yields nothing, and the old place's
  // directories are no longer served (they were, until the rescan, 300 s later).
  symlinkSync(join(d.dir, 'r2'), join(d.dir, 'h', 'lnk.new'));
  renameSync(join(d.dir, 'h', 'lnk.new'), join(d.dir, 'h', 'lnk'));
  let ev = await waitForList(c, (u) => u.length === 0);
  t.same(uris(ev), [], "the old place's directories go");
  // The person follows it (`rootsctl reload`): the watch moves there with it.
  const seen = nextEvent<ListChangedParams>(c, 'list_changed', WAIT_MS);
  t.equal((await c.reload()).ok, true);
  t.same(uris(await seen), [uri(join(d.dir, 'r2', 'b'))], "the new place's directories");
  mkdirSync(join(d.dir, 'r2', 'c'));
  ev = await waitForList(c, (u) => u.includes(uri(join(d.dir, 'r2', 'c'))));
  t.same(uris(ev), [uri(join(d.dir, 'r2', 'b')), uri(join(d.dir, 'r2', 'c'))], 'watched there');
});

void t.test('the directory holding a link on the way to a root renamed away', async (t) => {
  const { d, c } = await linkedRoot(t);
  // `h` moved away and another made in its place, its link leading elsewhere: the only event is
  // the holder's own (its watch follows the old directory). The old target must go.
  renameSync(join(d.dir, 'h'), join(d.dir, 'h-old'));
  mkdirSync(join(d.dir, 'h'));
  symlinkSync(join(d.dir, 'r2'), join(d.dir, 'h', 'lnk'));
  const ev = await waitForList(c, (u) => u.length === 0);
  t.same(uris(ev), [], "the old place's directories go");
  const seen = nextEvent<ListChangedParams>(c, 'list_changed', WAIT_MS);
  t.equal((await c.reload()).ok, true);
  t.same(uris(await seen), [uri(join(d.dir, 'r2', 'b'))], 'followed on reload');
});

void t.test(
  'a root through a link to a directory not made yet appears when it is made',
  async (t) => {
    // A path not made yet is pinned where it will be made: through a link, that is where the link
    // leads. The nearest directory on the written way holds only the dangling link, so a watch
    // there saw nothing of the making, and the root appeared only at the rescan (300 s).
    const { d, c, first } = await setup(t, ['h', 'p'], (dir) => {
      symlinkSync('../gx', join(dir, 'h', 'lnk'));
      symlinkSync('../px', join(dir, 'p', 'lnk'));
      return policy([`${dir}/h/lnk/*`, `${dir}/p/lnk`]);
    });
    t.same(uris(first), [], 'nothing yet');
    // Explained as missing, as the path itself would be (it said "not readable").
    t.same(
      (await c.explain('fs')).rules.map((r) => r.reason),
      ['missing', 'missing'],
      'both explained as missing',
    );
    mkdirSync(join(d.dir, 'gx', 'm'), { recursive: true });
    let ev = await waitForList(c, (u) => u.includes(uri(join(d.dir, 'gx', 'm'))));
    t.same(uris(ev), [uri(join(d.dir, 'gx', 'm'))], "a glob's base made where its link leads");
    mkdirSync(join(d.dir, 'gx', 'n'));
    ev = await waitForList(c, (u) => u.includes(uri(join(d.dir, 'gx', 'n'))));
    t.ok(ev.roots.length === 2, 'and watched there once made');
    mkdirSync(join(d.dir, 'px'));
    ev = await waitForList(c, (u) => u.includes(uri(join(d.dir, 'px'))));
    t.same(
      uris(ev),
      [uri(join(d.dir, 'gx', 'm')), uri(join(d.dir, 'gx', 'n')), uri(join(d.dir, 'px'))],
      'a plain root made where its link leads',
    );
  },
);
