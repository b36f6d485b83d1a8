/**
 * A directory swapped for a link between the layout's plan and bwrap's mounts. bwrap follows
 * links in each source and destination it binds, so a pin (a writable directory bound onto
 * itself) whose directory became a link to a read-only root lands on that root, writable. Anyone
 * who can write where the pin is can do it: another sandboxed server sharing the directory, timing
 * the swap by inotify. Here the swap is made certain: a `bwrap` first on PATH makes it, once,
 * just before it runs the real one.
 *
 * What holds: the sandbox's gate shows the proxy the mounts as they came out, the proxy finds the
 * pin not where it was planned, stops the sandbox before the server starts, and lays it out again
 * from the paths as they are now, where the link is a link. A path that went away in that moment
 * makes bwrap fail, and is laid out again the same way.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, startProxied } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

/** A `bwrap` on PATH that runs `swap` (sh) while `armed` counts down, then the real bwrap. */
function swappingBwrap(dir: string, armed: string, swap: string): string {
  const bwrap = spawnSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).stdout.trim();
  if (bwrap === '') throw new Error('bwrap is not installed (.ci/run installs it)');
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(
    join(bin, 'bwrap'),
    // Only the server's start (bwrap's probes have no --info-fd).
    `#!/bin/sh\ncase " $* " in *" --info-fd "*) n=$(cat '${armed}' 2>/dev/null || echo 0); if [ "$n" -gt 0 ]; then echo $((n - 1)) >'${armed}'; ${swap}; fi;; esac\nexec '${bwrap}' "$@"\n`,
  );
  chmodSync(join(bin, 'bwrap'), 0o755);
  return `${bin}:${process.env.PATH ?? ''}`;
}

/** The policy: a read-only root `aro`, a writable `keep`, and a read-only `other` when `more`. */
const policy = (w: string, more: boolean) =>
  `version: 1\nservers:\n  h:\n    sandbox: true\n    roots:\n      - path: ${w}/aro\n        readOnly: true\n      - path: ${w}/keep\n` +
  (more ? `      - path: ${w}/other\n        readOnly: true\n` : '');

/** A sandboxed hostile server on that policy, with `swap` armed for the starts of a restart. */
async function restartWithSwap(t: Test, w: string, swap: (armed: string) => string) {
  mkdirSync(join(w, 'other'), { recursive: true });
  const dir = join(w, '..');
  const armed = join(dir, 'armed');
  const d = await startDaemon(t, policy(w, false), { dir });
  const h = await startProxied(t, {
    server: 'h',
    socket: d.socket,
    proxyArgs: ['--no-enforce'],
    command: [process.execPath, HOSTILE_SERVER],
    env: { PATH: swappingBwrap(dir, armed, swap(armed)) },
  });
  return {
    h,
    /**
     * Arm `times` starts, and make the restart; resolves once a server runs again, or the layout
     * refused to start one (`refused`).
     */
    restart: async (times = 1, refused?: RegExp) => {
      writeFileSync(armed, String(times));
      d.writePolicy(policy(w, true));
      await waitFor(
        () =>
          h.stderr().includes('restarted the server (ms:') || refused?.test(h.stderr()) === true,
        30_000,
        'restart',
      );
      t.equal(readFileSync(armed, 'utf8').trim(), '0', 'each armed start was spoiled');
    },
  };
}

void t.test('a pin swapped for a link to a read-only root while bwrap starts', async (t) => {
  const w = join(ownedShortDir(t), 'w');
  const hooks = join(w, 'aro', '.git', 'hooks');
  mkdirSync(hooks, { recursive: true });
  writeFileSync(join(w, 'aro', '.git', 'config'), '[core]\n');
  // A repository in the writable root: its .git/config is protected, so `.git` is pinned.
  const git = join(w, 'keep', 'g', '.git');
  mkdirSync(git, { recursive: true });
  writeFileSync(join(git, 'config'), '[core]\n');
  const { h, restart } = await restartWithSwap(
    t,
    w,
    () => `mv '${git}' '${git}.real'; ln -s ../../aro/.git '${git}'`,
  );
  const hook = join(hooks, 'pre-commit');
  const write = async () => (await h.call('attempt', { action: 'write', ref: hook })).text;
  t.match(await write(), /^EROFS/, 'the read-only root at the start');
  // Laid out again from the paths as they are now, the `.git` is a link, which a writable root
  // may not hold (sandbox-protected-links.test.ts): the server is not started at all.
  const refused = new RegExp(`${git} is a symbolic link, and protected from writes`);
  await restart(1, refused);
  t.match(h.stderr(), /the sandbox's mounts are not where its layout put them/);
  t.match(h.stderr(), /laying the sandbox out again/);
  t.match(h.stderr(), refused, 'the new layout refuses the link');
  t.notMatch(await write().catch((e: Error) => e.message), /^ok/, 'nothing runs to write');
  t.notOk(existsSync(hook), 'no hook was written');
});

void t.test('a protected file gone while bwrap starts: laid out again', async (t) => {
  const w = join(ownedShortDir(t), 'w');
  mkdirSync(join(w, 'aro'), { recursive: true });
  const git = join(w, 'keep', 'g', '.git');
  mkdirSync(git, { recursive: true });
  writeFileSync(join(git, 'config'), '[core]\n');
  const { h, restart } = await restartWithSwap(t, w, () => `mv '${git}' '${git}.moved'`);
  await restart();
  t.match(h.stderr(), /bwrap could not start the sandbox/);
  t.match(h.stderr(), /laying the sandbox out again/);
  const list = await h.call('attempt', { action: 'list', ref: join(w, 'keep', 'g') });
  t.equal(list.text, 'ok: .git.moved', 'the new layout runs');
});

void t.test('layouts spoiled start after start: refused, then tried again later', async (t) => {
  // What a process that flips a path back and forth around each start would do (the new layout
  // then never sees what bwrap will): here each armed start fails as bwrap would.
  const w = join(ownedShortDir(t), 'w');
  mkdirSync(join(w, 'aro'), { recursive: true });
  mkdirSync(join(w, 'keep'), { recursive: true });
  const { h, restart } = await restartWithSwap(t, w, () => 'echo spoiled >&2; exit 1');
  await restart(3);
  t.match(h.stderr(), /did not come out as laid out 3 times in a row.*Trying again in 1 s/);
  t.match(h.stderr(), /restarting the server: its sandbox is laid out again; it can start now/);
  const list = await h.call('attempt', { action: 'list', ref: join(w, 'keep') });
  t.equal(list.text, 'ok: ', 'the server runs');
});
