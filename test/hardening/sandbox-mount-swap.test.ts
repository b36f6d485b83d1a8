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
 * from the paths as they are now, where the link is a link.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, startProxied } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

void t.test('a pin swapped for a link to a read-only root while bwrap starts', async (t) => {
  const bwrap = spawnSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).stdout.trim();
  t.ok(bwrap, 'bwrap is installed');
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  const hooks = join(w, 'aro', '.git', 'hooks');
  mkdirSync(hooks, { recursive: true });
  writeFileSync(join(w, 'aro', '.git', 'config'), '[core]\n');
  // A repository in the writable root: its .git/config is protected, so `.git` is pinned.
  const git = join(w, 'keep', 'g', '.git');
  mkdirSync(git, { recursive: true });
  writeFileSync(join(git, 'config'), '[core]\n');
  mkdirSync(join(w, 'other'));

  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const armed = join(dir, 'armed');
  writeFileSync(
    join(bin, 'bwrap'),
    [
      '#!/bin/sh',
      `case " $* " in *" --info-fd "*)`,
      `  if [ -e '${armed}' ] && [ -d '${git}' ] && [ ! -L '${git}' ]; then`,
      `    rm '${armed}'; mv '${git}' '${git}.real'; ln -s ../../aro/.git '${git}'`,
      '  fi;;',
      'esac',
      `exec '${bwrap}' "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(join(bin, 'bwrap'), 0o755);

  const policy = (other: boolean) =>
    `version: 1\nservers:\n  h:\n    sandbox: true\n    roots:\n      - path: ${w}/aro\n        readOnly: true\n      - path: ${w}/keep\n` +
    (other ? `      - path: ${w}/other\n        readOnly: true\n` : '');
  const d = await startDaemon(t, policy(false), { dir });
  const h = await startProxied(t, {
    server: 'h',
    socket: d.socket,
    proxyArgs: ['--no-enforce'],
    command: [process.execPath, HOSTILE_SERVER],
    env: { PATH: `${bin}:${process.env.PATH ?? ''}` },
  });
  const hook = join(hooks, 'pre-commit');
  const write = async () => (await h.call('attempt', { action: 'write', ref: hook })).text;
  t.match(await write(), /^EROFS/, 'the read-only root at the start');

  // The next start swaps the pin's directory for a link to the read-only root's .git.
  writeFileSync(armed, '');
  d.writePolicy(policy(true));
  await waitFor(() => h.stderr().includes('restarted the server (ms:'), 30_000, 'the restart');
  t.notOk(existsSync(armed), 'the swap was made');
  t.match(h.stderr(), /the sandbox's mounts are not where its layout put them/);
  t.match(h.stderr(), /laying the sandbox out again/);
  t.match(await write(), /^EROFS/, 'the read-only root is still read-only');
  t.notOk(existsSync(hook), 'no hook was written');
});
