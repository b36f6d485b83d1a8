/**
 * A directory above the watched ones renamed, removed or replaced. A watch follows its
 * directory's inode, and inotify tells it nothing when a directory above is renamed: after
 * `mv w w.old; mkdir -p w/a/n`, the watch of `w/a` went on watching `w.old/a`, the plan kept it
 * (same path), and nothing made in the new `w/a` was listed until the rescan (300 s here, as
 * by default). Every directory on the way is now watched for its entry on that way
 * (daemon/watch-way.ts). Without that, each test below times out (30 s).
 */
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { defaultBackend, type WatchBackend } from '../../daemon/watch-backend.js';
import { waitFor } from '../helpers/poll.js';
import {
  logCountBeforeSentinel,
  none,
  policy,
  setup,
  uri,
  uris,
  waitForList,
  WAIT_MS,
} from '../helpers/watch-session.js';

void t.test('the directory above every root replaced: the new ones are watched', async (t) => {
  const { d, c, first } = await setup(t, ['w/a/x', 'w/p/q'], (dir) =>
    policy([`${dir}/w/a/*`, `${dir}/w/p/q`]),
  );
  const w = join(d.dir, 'w');
  t.same(uris(first), [uri(join(w, 'a', 'x')), uri(join(w, 'p', 'q'))]);
  await waitFor(() => d.daemon.watcher.isIdle(), WAIT_MS, 'the watcher idle');

  // A checkout replaced by a fresh one: no event reaches the watches of `w/a` or `w/p`.
  renameSync(w, `${w}.old`);
  mkdirSync(join(w, 'a', 'n'), { recursive: true });
  mkdirSync(join(w, 'p', 'q'), { recursive: true });
  const want = [uri(join(w, 'a', 'n')), uri(join(w, 'p', 'q'))];
  const ev = await waitForList(c, (u) => want.every((x) => u.includes(x)));
  t.same(uris(ev), want, 'the new directories, and the old ones gone');

  // Watched where they are now, not where the old ones went.
  mkdirSync(join(`${w}.old`, 'a', 'stale'));
  mkdirSync(join(w, 'a', 'later'));
  const later = await waitForList(c, (u) => u.includes(uri(join(w, 'a', 'later'))));
  t.same(uris(later), [uri(join(w, 'a', 'later')), ...want], 'the old place is not followed');
});

void t.test('a directory in the middle replaced by one moved in', async (t) => {
  const { d, c, first } = await setup(t, ['w/m/a/x', 'prep/a/y'], (dir) =>
    policy([`${dir}/w/m/a/*`]),
  );
  const m = join(d.dir, 'w', 'm');
  t.same(uris(first), [uri(join(m, 'a', 'x'))]);
  await waitFor(() => d.daemon.watcher.isIdle(), WAIT_MS, 'the watcher idle');

  renameSync(m, `${m}.old`);
  renameSync(join(d.dir, 'prep'), m);
  const ev = await waitForList(c, (u) => u.includes(uri(join(m, 'a', 'y'))));
  t.same(uris(ev), [uri(join(m, 'a', 'y'))], 'what the moved-in directory holds');
  mkdirSync(join(m, 'a', 'z'));
  const z = await waitForList(c, (u) => u.includes(uri(join(m, 'a', 'z'))));
  t.equal(z.roots.length, 2, 'and it is watched');
});

void t.test('a directory above the one holding a link on the way renamed', async (t) => {
  // `g/h/lnk/*` with `h/lnk` leading to `r1`: `g` replaced, its new link leading to `r2`. The
  // base was pinned where it led (docs/policy.md), so the old place's directories must go.
  const { d, c, first } = await setup(t, ['g/h', 'r1/a', 'r2/b'], (dir) => {
    symlinkSync(join(dir, 'r1'), join(dir, 'g', 'h', 'lnk'));
    return policy([`${dir}/g/h/lnk/*`]);
  });
  t.same(uris(first), [uri(join(d.dir, 'r1', 'a'))]);
  await waitFor(() => d.daemon.watcher.isIdle(), WAIT_MS, 'the watcher idle');

  renameSync(join(d.dir, 'g'), join(d.dir, 'g.old'));
  mkdirSync(join(d.dir, 'g', 'h'), { recursive: true });
  symlinkSync(join(d.dir, 'r2'), join(d.dir, 'g', 'h', 'lnk'));
  const ev = await waitForList(c, (u) => u.length === 0);
  t.same(uris(ev), [], "the old place's directories go");
});

void t.test("an include's directory two levels down, the one above replaced", async (t) => {
  const { d, c, first } = await setup(t, ['a', 'b', 'c', 'deep/er/conf.d'], (dir) =>
    policy([`${dir}/a`], 'include: ["deep/er/conf.d/*.yaml"]\n'),
  );
  t.same(uris(first), [uri(join(d.dir, 'a'))]);
  await waitFor(() => d.daemon.watcher.isIdle(), WAIT_MS, 'the watcher idle');

  const deep = join(d.dir, 'deep');
  renameSync(deep, `${deep}.old`);
  mkdirSync(join(deep, 'er', 'conf.d'), { recursive: true });
  writeFileSync(join(deep, 'er', 'conf.d', 'team.yaml'), policy([`${d.dir}/b`]));
  const ev = await waitForList(c, (u) => u.includes(uri(join(d.dir, 'b'))));
  t.same(uris(ev), [uri(join(d.dir, 'a')), uri(join(d.dir, 'b'))], 'the new include loads');
  // The reload reads the files by name; only a watch of the new directory sees the next one.
  await waitFor(() => d.daemon.watcher.isIdle(), WAIT_MS, 'the watcher idle');
  writeFileSync(join(deep, 'er', 'conf.d', 'two.yaml'), policy([`${d.dir}/c`]));
  const two = await waitForList(c, (u) => u.includes(uri(join(d.dir, 'c'))));
  t.equal(two.roots.length, 3, 'and the next file there loads too');
});

void t.test('what happens beside the way costs no look at the roots', async (t) => {
  const { d, c } = await setup(t, ['w/a/x'], (dir) => policy([`${dir}/w/a/*`]));
  await waitFor(() => d.daemon.watcher.isIdle(), WAIT_MS, 'the watcher idle');
  const s = d.daemon.watcher.status();
  // `w`, the daemon's directory, and every directory above it to `/`.
  t.ok(s.above >= 2, `${s.above} directories above the watched ones`);
  t.equal(s.mode, 'events');

  const before = logCountBeforeSentinel(d, 'recomputing (');
  const n = await none(c, () => {
    for (let i = 0; i < 50; i++) writeFileSync(join(d.dir, 'w', `f${i}`), 'x');
    mkdirSync(join(d.dir, 'w', 'sibling'));
  });
  t.equal(n, 0, 'no list changed');
  t.equal(logCountBeforeSentinel(d, 'recomputing ('), before, 'and nothing was recomputed');
});

void t.test('a directory above that cannot be watched is left, not degraded', async (t) => {
  // The OS refuses an inotify watch of a directory the user may not read; the tests run as
  // root, who may read all. The backend refuses `w` as the kernel would.
  let refusals = 0;
  const backend: WatchBackend = {
    dir: (path, depth, onEvent, onError, enters) => {
      if (path.endsWith('/w')) {
        refusals++;
        return Promise.reject(
          Object.assign(new Error(`EACCES: permission denied, watch '${path}'`), {
            code: 'EACCES',
          }),
        );
      }
      return defaultBackend.dir(path, depth, onEvent, onError, enters);
    },
    recursive: (...a) => defaultBackend.recursive(...a),
  };
  const { d, c } = await setup(t, ['w/a/x'], (dir) => policy([`${dir}/w/a/*`]), {
    watchBackend: backend,
  });
  await waitFor(() => d.daemon.watcher.isIdle(), WAIT_MS, 'the watcher idle');
  t.ok(refusals > 0, 'the way through w was asked for');
  const s = d.daemon.watcher.status();
  t.equal(s.mode, 'events', 'not degraded: the roots are not rescanned every 2 s for it');
  t.same(s.degraded, []);
  t.ok(
    d.logs.some((l) => l.includes(`not watching ${join(d.dir, 'w')} for renames`)),
    'the log says which, and what that leaves',
  );
  // The roots themselves are still watched by events.
  mkdirSync(join(d.dir, 'w', 'a', 'y'));
  const ev = await waitForList(c, (u) => u.includes(uri(join(d.dir, 'w', 'a', 'y'))));
  t.equal(ev.roots.length, 2);
});
