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
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, startProxied } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

/** A `bwrap` on PATH that runs `swap` (sh) once `armed` exists, then the real bwrap. */
function swappingBwrap(dir: string, armed: string, swap: string): string {
  const bwrap = spawnSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).stdout.trim();
  if (bwrap === '') throw new Error('bwrap is not installed (.ci/run installs it)');
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  writeFileSync(
    join(bin, 'bwrap'),
    // Only the server's start (bwrap's probes have no --info-fd).
    `#!/bin/sh\ncase " $* " in *" --info-fd "*) if [ -e '${armed}' ]; then rm '${armed}'; ${swap}; fi;; esac\nexec '${bwrap}' "$@"\n`,
  );
  chmodSync(join(bin, 'bwrap'), 0o755);
  return `${bin}:${process.env.PATH ?? ''}`;
}

/** The policy: a read-only root `aro`, a writable `keep`, and a read-only `other` when `more`. */
const policy = (w: string, more: boolean) =>
  `version: 1\nservers:\n  h:\n    sandbox: true\n    roots:\n      - path: ${w}/aro\n        readOnly: true\n      - path: ${w}/keep\n` +
  (more ? `      - path: ${w}/other\n        readOnly: true\n` : '');

/** A sandboxed hostile server on that policy, with `swap` armed for the restart `more` makes. */
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
    restart: async () => {
      writeFileSync(armed, '');
      d.writePolicy(policy(w, true));
      await waitFor(() => h.stderr().includes('restarted the server (ms:'), 30_000, 'restart');
      t.notOk(existsSync(armed), 'the swap was made');
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
  await restart();
  t.match(h.stderr(), /the sandbox's mounts are not where its layout put them/);
  t.match(h.stderr(), /laying the sandbox out again/);
  t.match(await write(), /^EROFS/, 'the read-only root is still read-only');
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
