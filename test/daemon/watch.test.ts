import {
  copyFileSync,
  mkdirSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { grantsFile } from '../../common/locations.js';
import type { ListChangedParams } from '../../protocol/methods.js';
import type { RootsClient } from '../../protocol/client.js';
import { nextEvent, startDaemon, type TestDaemon } from '../helpers/daemon.js';

/**
 * A module beside this test's compiled file, by full URL, for `t.mockImport`: tap resolves a
 * relative name against the caller's source-mapped location (the .ts file in test/), where no
 * compiled module is.
 */
// eslint-disable-next-line no-restricted-syntax -- the compiled module is what is wanted here
const compiled = (rel: string): string => new URL(rel, import.meta.url).href;

/** Only a ceiling for waits on an event: on a loaded 2-core machine a watch has taken over 5 s. */
const WAIT_MS = 30_000;

const uri = (path: string) => pathToFileURL(realpathSync(path)).href;
const uris = (ev: ListChangedParams | { roots: { uri: string }[] }) => ev.roots.map((r) => r.uri);

/** A policy giving server `fs` the listed roots (plain paths, globs, or `{path, expires}` objects). */
function policy(roots: (string | { path: string; expires: string })[], head = ''): string {
  if (roots.length === 0) return `version: 1\n${head}servers:\n  fs:\n    roots: []\n`;
  const lines = roots.map((r) =>
    typeof r === 'string'
      ? `      - path: "${r}"\n`
      : `      - path: "${r.path}"\n        expires: "${r.expires}"\n`,
  );
  return `version: 1\n${head}servers:\n  fs:\n    roots:\n${lines.join('')}`;
}

/** The daemon each subscribed client of `setup` talks to, for the sentinel below. */
const daemonOf = new WeakMap<RootsClient, TestDaemon>();

/** Start a daemon and a client subscribed to `fs`; `dirs` are created first. */
async function setup(
  t: Test,
  dirs: string[],
  yaml: (dir: string) => string | undefined,
  overrides = {},
) {
  const d = await startDaemon(t, undefined, overrides);
  // The sentinel's root, and the directory of the grants file it writes, exist from the start,
  // so that neither changes what the daemon watches during the test.
  for (const dir of [...dirs, SENTINEL, 'state']) mkdirSync(join(d.dir, dir), { recursive: true });
  const text = yaml(d.dir);
  if (text !== undefined) {
    d.writePolicy(text);
    const c0 = await d.connect('setup');
    await c0.reload();
  }
  const c = await d.connect();
  daemonOf.set(c, d);
  const first = await c.listRoots('fs', { subscribe: true });
  return { d, c, first };
}

const SENTINEL = 'sentinel';
/** How many log lines each daemon had when its last sentinel began. */
const sentinelAt = new WeakMap<TestDaemon, number>();

/**
 * Prove that nothing more is coming, without waiting a guessed while: make a change of our own
 * through the same path as a policy edit (a hand edit of the grants file, which the watcher
 * reloads like any policy file), and wait for its notification, then undo it the same way. The
 * watcher applies what it saw one batch after another, so a notification that the change before
 * still had in store arrives before the sentinel's; and the sentinel's list must be the list
 * before it plus the sentinel's root, or something else changed with it. Returns the
 * notifications that came before the sentinel's.
 */
async function beforeSentinel(
  c: RootsClient,
  seen: ListChangedParams[],
): Promise<ListChangedParams[]> {
  const d = daemonOf.get(c);
  if (!d) throw new Error('the sentinel needs a client from setup()');
  sentinelAt.set(d, d.logs.length);
  const mark = uri(join(d.dir, SENTINEL));
  const before = uris(await c.listRoots('fs'));
  const file = grantsFile(d.stateDir);
  const marked = waitForList(c, (u) => u.includes(mark));
  writeFileSync(
    file,
    `version: 1\nservers:\n  fs:\n    roots:\n      - {path: "${join(d.dir, SENTINEL)}", expires: 2099-01-01T00:00:00Z}\n`,
  );
  const withMark = await marked;
  const unmarked = waitForList(c, (u) => !u.includes(mark));
  writeFileSync(file, 'version: 1\n');
  await unmarked;
  const at = seen.indexOf(withMark);
  const earlier = seen.slice(0, at);
  const expected = [...(earlier.length > 0 ? uris(earlier[earlier.length - 1]!) : before), mark];
  if (uris(withMark).sort().join() !== expected.sort().join()) {
    throw new Error(
      `the sentinel's notification carried another change: ${uris(withMark).join()} (expected ${expected.join()})`,
    );
  }
  return earlier;
}

/** Run `action`, expect one notification, then prove no second one came (see beforeSentinel). */
async function exactlyOne(c: RootsClient, action: () => void): Promise<ListChangedParams[]> {
  const seen: ListChangedParams[] = [];
  const on = (p: ListChangedParams) => seen.push(p);
  c.on('list_changed', on);
  try {
    const first = nextEvent<ListChangedParams>(c, 'list_changed', WAIT_MS);
    action();
    await first;
    return await beforeSentinel(c, seen);
  } finally {
    c.off('list_changed', on);
  }
}

/** Resolve with the first notification whose list satisfies `pred`. */
function waitForList(
  c: RootsClient,
  pred: (uris: string[]) => boolean,
  ms = WAIT_MS,
): Promise<ListChangedParams> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      c.off('list_changed', on);
      reject(new Error(`no matching list_changed within ${ms} ms`));
    }, ms);
    const on = (p: ListChangedParams) => {
      if (!pred(uris(p))) return;
      clearTimeout(timer);
      c.off('list_changed', on);
      resolve(p);
    };
    c.on('list_changed', on);
  });
}

/**
 * Poll a condition (a state the daemon reaches, not a guess at timing) until true or `ms`. The
 * limit is only a ceiling: on a loaded 2-core machine setting the first watches has taken over 5 s.
 */
async function until(what: string, cond: () => boolean | Promise<boolean>, ms = WAIT_MS) {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await delay(20);
  }
}

/** Count the notifications `action` causes, up to the sentinel's (see beforeSentinel). */
async function none(c: RootsClient, action: () => void | Promise<void>): Promise<number> {
  const seen: ListChangedParams[] = [];
  const on = (p: ListChangedParams) => seen.push(p);
  c.on('list_changed', on);
  try {
    await action();
    return (await beforeSentinel(c, seen)).length;
  } finally {
    c.off('list_changed', on);
  }
}

const logCount = (d: TestDaemon, text: string) => d.logs.filter((l) => l.includes(text)).length;
/** Like logCount, over the lines logged before the last sentinel (whose own reloads are logged). */
const logCountBeforeSentinel = (d: TestDaemon, text: string) =>
  d.logs.slice(0, sentinelAt.get(d)).filter((l) => l.includes(text)).length;

void t.test('policy edits: each kind of save gives exactly one notification', async (t) => {
  const { d, c, first } = await setup(t, ['a', 'b', 'c', 'd', 'e'], (dir) => policy([`${dir}/a`]));
  t.same(uris(first), [uri(join(d.dir, 'a'))]);
  const expect = (names: string[]) => names.map((n) => uri(join(d.dir, n)));

  let seen = await exactlyOne(c, () => {
    const tmp = join(d.dir, '.mcp-roots.yaml.tmp123');
    writeFileSync(tmp, policy([`${d.dir}/b`]));
    renameSync(tmp, d.config);
  });
  t.equal(seen.length, 1, 'rename over: one notification');
  t.same(uris(seen[0]!), expect(['b']));

  seen = await exactlyOne(c, () => writeFileSync(d.config, policy([`${d.dir}/c`])));
  t.equal(seen.length, 1, 'in-place write: one notification');
  t.same(uris(seen[0]!), expect(['c']));

  seen = await exactlyOne(c, () => {
    unlinkSync(d.config);
    writeFileSync(d.config, policy([`${d.dir}/d`]));
  });
  t.equal(seen.length, 1, 'delete and recreate: one notification');
  t.same(uris(seen[0]!), expect(['d']));

  seen = await exactlyOne(c, () => {
    const swp = join(d.dir, '.mcp-roots.yaml.swp');
    writeFileSync(swp, 'b0VIM 9.0');
    writeFileSync(join(d.dir, '4913'), '');
    unlinkSync(join(d.dir, '4913'));
    copyFileSync(d.config, `${d.config}~`);
    writeFileSync(d.config, policy([`${d.dir}/e`]));
    unlinkSync(`${d.config}~`);
    unlinkSync(swp);
  });
  t.equal(seen.length, 1, 'vim-style save: one notification');
  t.same(uris(seen[0]!), expect(['e']));

  // The swap and backup files alone reload nothing.
  const loads = logCount(d, 'policy loaded');
  const n = await none(c, async () => {
    writeFileSync(join(d.dir, '.mcp-roots.yaml.swp'), 'x');
    writeFileSync(`${d.config}~`, 'x');
    await until('the recompute for the new files', () => logCount(d, 'recomputing') > 0);
  });
  t.equal(n, 0, 'no notification for swap and backup files');
  t.equal(logCountBeforeSentinel(d, 'policy loaded'), loads, 'no reload for swap and backup files');
});

void t.test('an invalid edit keeps serving; the next valid edit applies', async (t) => {
  const { d, c } = await setup(t, ['a', 'b'], (dir) => policy([`${dir}/a`]));
  const n = await none(c, async () => {
    writeFileSync(
      d.config,
      'version: 1\nservers:\n  fs:\n    roots:\n      - path: x\n        readonly: true\n',
    );
    await until('the error in status', async () => (await c.status()).policy.errors.length > 0);
  });
  t.equal(n, 0, 'no notification for an invalid edit');
  const status = await c.status();
  t.match(status.policy.errors[0]!.message, /readonly/);
  t.same(uris(await c.listRoots('fs')), [uri(join(d.dir, 'a'))], 'the last good policy serves');

  const seen = await exactlyOne(c, () => writeFileSync(d.config, policy([`${d.dir}/b`])));
  t.equal(seen.length, 1);
  t.same(uris(seen[0]!), [uri(join(d.dir, 'b'))]);
  t.same((await c.status()).policy.errors, [], 'errors cleared');
});

void t.test('a missing main file, a symlinked main file, and deleting it', async (t) => {
  const { d, c, first } = await setup(t, ['a', 'b', 'dotfiles'], () => undefined);
  t.same(first.roots, [], 'no policy file: no roots');
  const target = join(d.dir, 'dotfiles', 'roots.yaml');
  writeFileSync(target, policy([`${d.dir}/a`]));
  let seen = await exactlyOne(c, () => symlinkSync(target, d.config));
  t.equal(seen.length, 1, 'the file appearing (as a symlink) applies');
  t.same(uris(seen[0]!), [uri(join(d.dir, 'a'))]);

  seen = await exactlyOne(c, () => writeFileSync(target, policy([`${d.dir}/b`])));
  t.equal(seen.length, 1, "an edit of the link's target applies");
  t.same(uris(seen[0]!), [uri(join(d.dir, 'b'))]);

  seen = await exactlyOne(c, () => unlinkSync(d.config));
  t.equal(seen.length, 1, 'deleting the main file is a decision');
  t.same(seen[0]!.roots, [], 'every list becomes empty');
});

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

void t.test('include added or removed changes what is watched', async (t) => {
  const { d, c, first } = await setup(t, ['a', 'inc'], () => policy([]));
  t.same(first.roots, []);
  const inc = join(d.dir, 'inc', 'a.yaml');
  writeFileSync(inc, policy([`${d.dir}/a`]));
  const before = d.daemon.watcher.status().directories;

  let seen = await exactlyOne(c, () =>
    writeFileSync(d.config, policy([], `include: ["${d.dir}/inc/*.yaml"]\n`)),
  );
  t.same(uris(seen[0]!), [uri(join(d.dir, 'a'))], 'the included file applies');
  await until(
    'the include directory watched',
    () => d.daemon.watcher.status().directories > before,
  );

  seen = await exactlyOne(c, () => writeFileSync(inc, policy([])));
  t.equal(seen.length, 1, 'an edit of the included file applies');
  t.same(seen[0]!.roots, []);

  seen = await exactlyOne(c, () =>
    writeFileSync(join(d.dir, 'inc', 'b.yaml'), policy([`${d.dir}/a`])),
  );
  t.equal(seen.length, 1, 'a new file matching the include glob applies');

  seen = await exactlyOne(c, () => writeFileSync(d.config, policy([])));
  t.same(seen[0]!.roots, [], 'include removed');
  await until(
    'the include directory released',
    () => d.daemon.watcher.status().directories === before,
  );
  const loads = logCount(d, 'policy loaded');
  const n = await none(c, () => writeFileSync(inc, policy([`${d.dir}/a`])));
  t.equal(n, 0, 'an edit of a file no longer included sends nothing');
  t.equal(logCountBeforeSentinel(d, 'policy loaded'), loads, 'and reloads nothing');
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

void t.test('close() is idempotent', async (t) => {
  const { d } = await setup(t, [], () => undefined);
  const w = d.daemon.watcher;
  const p = w.close();
  t.equal(w.close(), p, 'the same promise');
  await p;
  t.equal(w.status().directories, 0, 'nothing left open');
});

void t.test('a watch that cannot be set is rescanned, listed, and recovers', async (t) => {
  const real = await import('../../daemon/watch-backend.js');
  let allow = false;
  const backend: typeof real.defaultBackend = {
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
        : real.defaultBackend.dir(path, depth, onEvent, onError),
    recursive: (path, ignore, onEvent, onError) =>
      real.defaultBackend.recursive(path, ignore, onEvent, onError),
  };
  // Mock each level's own import: the daemon's watcher gets the failing backend. Each module is
  // named by its full URL: tap would resolve a relative name against the source-mapped test/
  // file, while the compiled modules live in dist/.
  const watcher = await t.mockImport(compiled('../../daemon/watcher.js'), {
    [compiled('../../daemon/watch-backend.js')]: { ...real, defaultBackend: backend },
  });
  const daemon = await t.mockImport(compiled('../../daemon/daemon.js'), {
    [compiled('../../daemon/watcher.js')]: watcher,
  });
  const { startDaemon: start } = await t.mockImport<typeof import('../helpers/daemon.js')>(
    compiled('../helpers/daemon.js'),
    { [compiled('../../daemon/daemon.js')]: daemon },
  );
  const d = await start(t, undefined);
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
