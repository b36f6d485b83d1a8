/**
 * A link on another server's root, re-pointed by a server that may write where it lies, and then
 * a restart of the daemon (a login, an upgrade, a crash). The running daemon refused the new
 * target, but its pins lived in memory only, so the next start followed the link as it stood and
 * gave the other server a directory outside every root, read-write (**was a hole**, an attacker
 * pass). The pins are now kept in the state directory (daemon/pins-file.ts): a restart follows
 * nothing anew, and `rootsctl reload`, the person's word, still does. Real daemon processes.
 */
import {
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { RootsClient } from '../../protocol/client.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';
import { spawnDaemon } from '../helpers/spawn-daemon.js';

/** The daemon's pins file under `dir/state`, or nothing before it is written. */
function pinsText(dir: string): string {
  const file = join(dir, 'state', 'link-pins.json');
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}

void t.test('a link re-pointed before a restart is not followed by it', async (t) => {
  const dir = ownedShortDir(t);
  const [w, projB, secret] = [join(dir, 'w'), join(dir, 'projB'), join(dir, 'secret')];
  for (const d of [w, projB, secret]) mkdirSync(d);
  symlinkSync(projB, join(w, 'lnk'));
  const config = join(dir, 'policy.yaml');
  writeFileSync(
    config,
    `version: 1\nservers:\n  a:\n    roots: [{path: ${w}}]\n  b:\n    roots: [{path: ${w}/lnk}]\n`,
  );
  const socket = join(dir, 'run', 'rootsd.sock');
  const args = ['--config', config, '--socket', socket, '--state-dir', join(dir, 'state')];
  const uris = async () => {
    const c = await RootsClient.connect({ socket });
    try {
      return (await c.listRoots('b')).roots.map((r) => r.uri);
    } finally {
      await c.close();
    }
  };

  let daemon = await spawnDaemon(args, { socket, t });
  t.same(await uris(), [pathToFileURL(projB).href], 'the link as it was when the daemon began');
  await waitFor(() => pinsText(dir).includes(projB), 30_000, 'where it led is kept');

  // What server a may do in its root: a new link renamed over the old one.
  symlinkSync(secret, join(w, 'lnk.new'));
  renameSync(join(w, 'lnk.new'), join(w, 'lnk'));
  await waitFor(async () => (await uris()).length === 0, 30_000, 'the running daemon refuses it');

  daemon.child.kill('SIGKILL');
  await daemon.exited;
  daemon = await spawnDaemon(args, { socket, t });
  t.same(await uris(), [], 'a restart does not follow the re-pointed link');
  const status = await RootsClient.connect({ socket });
  t.match(
    JSON.stringify((await status.status()).policy),
    'now leads to',
    'and status says where it leads and where it was pinned',
  );
  // The person's reload follows it, as before.
  await status.reload();
  t.same(await uris(), [pathToFileURL(secret).href], 'rootsctl reload follows it');
  await status.close();
  daemon.child.kill('SIGTERM');
  await daemon.exited;
});

void t.test(
  'a pins file that is not one is said, and links are followed as they are',
  async (t) => {
    const dir = ownedShortDir(t);
    const [lnk, proj] = [join(dir, 'lnk'), join(dir, 'proj')];
    mkdirSync(proj);
    symlinkSync(proj, lnk);
    mkdirSync(join(dir, 'state'), { mode: 0o700 });
    writeFileSync(join(dir, 'state', 'link-pins.json'), '[["half a pin"]]\n');
    const config = join(dir, 'policy.yaml');
    writeFileSync(config, `version: 1\nservers:\n  b:\n    roots: [{path: ${lnk}}]\n`);
    const socket = join(dir, 'run', 'rootsd.sock');
    const daemon = await spawnDaemon(
      ['--config', config, '--socket', socket, '--state-dir', join(dir, 'state')],
      { socket, t },
    );
    await waitFor(
      () =>
        daemon.stderr().includes('link-pins.json is not a list of pins (written by mcp-rootsd)'),
      30_000,
      'the daemon says so',
    );
    const c = await RootsClient.connect({ socket });
    t.same(
      (await c.listRoots('b')).roots.map((r) => r.uri),
      [pathToFileURL(proj).href],
    );
    await c.close();
    await waitFor(() => pinsText(dir).includes(proj), 30_000, 'written anew');
    daemon.child.kill('SIGTERM');
    await daemon.exited;
  },
);
