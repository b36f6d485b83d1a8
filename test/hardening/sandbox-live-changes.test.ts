/**
 * A sandboxed server keeps what its mounts give it for as long as it runs, and can hand an open
 * directory or a socket to anything it can reach. Policy changes while it runs, each against a
 * server that keeps a Unix socket in a root both instances share and answers tools/list slowly
 * (so that an old instance outlives a restart that reads its lists):
 *
 * - a restart never runs the old and the new instance at once: the new one finds no one at the
 *   socket (the old one could have passed it a descriptor of a root taken away);
 * - a change that takes access away stops the old instance at once, without reading its lists;
 * - a policy that stops naming the server leaves it sandboxed, never started with all of the
 *   user's access.
 *
 * Run with --no-enforce: only the kernel answers.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, startProxied, type Proxied } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

/** Wait for the `n`th restart (counted in the proxy's log) and for its server's first answer. */
async function restarted(h: Proxied, n: number, what: string): Promise<{ keeper: string }> {
  await waitFor(
    () => h.stderr().split('restarting the server:').length - 1 >= n,
    30_000,
    `restart ${n}: ${what}`,
  );
  await waitFor(
    () => h.stderr().split('restarted the server (ms:').length - 1 >= n,
    30_000,
    `restart ${n} done: ${what}\n${h.stderr()}`,
  );
  return JSON.parse((await h.call('launch')).text) as { keeper: string };
}

void t.test('a sandboxed server under live policy changes', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['keep', 'sec', 'extra']) mkdirSync(join(w, d), { recursive: true });
  writeFileSync(join(w, 'sec', 'secret.txt'), 'secret');
  const policy = (roots: string[], named = true) =>
    `version: 1\nservers:\n` +
    (named
      ? `  h:\n    sandbox: true\n    roots:\n${roots.map((r) => `      - path: ${w}/${r}\n`).join('')}`
      : '') +
    `  other:\n    roots:\n      - path: ${w}/keep\n`;
  const d = await startDaemon(t, policy(['keep', 'sec']), { dir });
  const admin = await d.connect('admin');
  const h = await startProxied(t, {
    server: 'h',
    socket: d.socket,
    proxyArgs: ['--no-enforce', '--allow-unknown-server'],
    command: [
      process.execPath,
      HOSTILE_SERVER,
      `--keeper=${w}/keep/keeper.sock`,
      '--slow-list=1500',
    ],
  });
  const attempt = async (action: string, ref: string) =>
    (await h.call('attempt', { action, ref })).text;
  t.equal(JSON.parse((await h.call('launch')).text).keeper, 'ENOENT', 'the first instance');
  t.equal(await attempt('read', `${w}/sec/secret.txt`), 'ok: secret');

  // A change that only adds: the old instance may finish, but is gone before the new starts.
  await admin.grant('h', join(w, 'extra'), { seconds: 600 });
  const added = await restarted(h, 1, 'a grant');
  t.not(added.keeper, 'connected', 'the new instance found no old one to hand it anything');
  t.notMatch(h.stderr(), 'stopping the old server at once', 'an added root lets the old finish');

  // A root taken away: the old instance is stopped at once, and not alive beside the new one.
  d.writePolicy(policy(['keep']));
  const removed = await restarted(h, 2, 'a root removed');
  t.match(h.stderr(), 'the change takes access away: stopping the old server at once');
  t.not(removed.keeper, 'connected', 'nothing handed over across the change');
  t.match(await attempt('read', `${w}/sec/secret.txt`), /^ENOENT: /, 'the root is gone');

  // The grant expires early (revoked): the same.
  await admin.revoke('h', join(w, 'extra'));
  const revoked = await restarted(h, 3, 'a grant revoked');
  t.not(revoked.keeper, 'connected');
  t.match(await attempt('list', `${w}/extra`), /^ENOENT: /, 'the revoked root is gone');

  // The policy stops naming the server: it stays in its sandbox, with no roots.
  d.writePolicy(policy([], false));
  await restarted(h, 4, 'the server no longer named');
  t.match(h.stderr(), 'a session that started sandboxed stays sandboxed');
  t.notMatch(h.stderr().split('restarting the server:').at(-1)!, /starting the server\n/);
  t.match(await attempt('write', `${w}/escaped.txt`), /^(EROFS|ENOENT|EACCES): /);
  t.notOk(existsSync(join(w, 'escaped.txt')), 'nothing written outside');
  t.match(await attempt('read', `${w}/sec/secret.txt`), /^ENOENT: /);
});
