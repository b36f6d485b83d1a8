/**
 * A sandboxed server keeps what its mounts give it for as long as it runs, and can hand an open
 * directory or a socket to anything it can reach. Policy changes while it runs, each against a
 * server that keeps a Unix socket in a root both instances share and answers tools/list slowly
 * (so that an old instance outlives a restart that reads its lists):
 *
 * - a restart never runs the old and the new instance at once: the new one finds no one at the
 *   socket (the old one could have passed it a descriptor of a root taken away);
 * - a change that takes access away stops the old instance at once, without reading its lists;
 * - a change while the new instance opens or settles (its lists read) ends that at once;
 * - a policy that stops naming the server leaves it sandboxed, never started with all of the
 *   user's access.
 *
 * Run with --no-enforce: only the kernel answers. The server is let have Unix sockets
 * (`sandbox: {unixSockets: true}`), which the sandbox refuses otherwise
 * (test/hardening/sandbox-unix-sockets.test.ts): these hold for a server that has them.
 */
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { startHostile, type Proxied } from '../helpers/proxied-server.js';
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
      ? `  h:\n    sandbox: {unixSockets: true}\n    roots:\n${roots.map((r) => `      - path: ${w}/${r}\n`).join('')}`
      : '') +
    `  other:\n    roots:\n      - path: ${w}/keep\n`;
  const d = await startDaemon(t, policy(['keep', 'sec']), { dir });
  const admin = await d.connect('admin');
  const h = await startHostile(t, d.socket, {
    flags: [`--keeper=${w}/keep/keeper.sock`, '--slow-list=1500'],
    proxyArgs: ['--allow-unknown-server'],
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
  t.match(h.stderr(), 'a session that started sandboxed keeps its sandbox and last rule');
  t.notMatch(h.stderr().split('restarting the server:').at(-1)!, /starting the server\n/);
  await attempt('write', `${w}/escaped.txt`);
  t.notOk(existsSync(join(w, 'escaped.txt')), 'nothing written outside');
  t.match(await attempt('read', `${w}/sec/secret.txt`), /^ENOENT: /);
});

/**
 * A daemon whose policy gives the sandboxed `h` the roots `keep` and `sec` (which holds a secret),
 * and a proxy on hostile.mjs with `flags(w)`, whose first instance has read the secret.
 */
async function keepAndSecret(t: Test, flags: (w: string) => string[]) {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['keep', 'sec', 'extra']) mkdirSync(join(w, d), { recursive: true });
  writeFileSync(join(w, 'sec', 'secret.txt'), 'secret');
  const policy = (roots: string[]) =>
    `version: 1\nservers:\n  h:\n    sandbox: {unixSockets: true}\n    roots:\n` +
    roots.map((r) => `      - path: ${w}/${r}\n`).join('');
  const d = await startDaemon(t, policy(['keep', 'sec']), { dir });
  const admin = await d.connect('admin');
  const h = await startHostile(t, d.socket, { flags: flags(w) });
  const readSecret = async () =>
    (await h.call('attempt', { action: 'read', ref: `${w}/sec/secret.txt` })).text;
  t.equal(await readSecret(), 'ok: secret');
  /** Take `sec` away. */
  const removeSec = () => d.writePolicy(policy(['keep']));
  return { w, admin, h, readSecret, removeSec };
}

void t.test('a change during a restart stops the old instance at once', async (t) => {
  // Its lists take a minute: a restart that reads them holds the old instance that long.
  const { w, admin, h, readSecret, removeSec } = await keepAndSecret(t, () => [
    '--slow-list=60000',
  ]);
  // Only adds: the old instance may give its lists...
  await admin.grant('h', join(w, 'extra'), { seconds: 600 });
  await waitFor(() => h.stderr().includes('restarting the server:'), 30_000, 'the restart begins');
  // ...until a change that takes a root away comes while it does.
  removeSec();
  await waitFor(
    () => h.stderr().includes('restarted the server (ms:'),
    30_000,
    'the restart ends without the old lists',
  );
  t.match(await readSecret(), /^ENOENT: /, 'the new instance was planned after the change');
});

void t.test('a change while the new instance settles is not held up by it', async (t) => {
  // The instance that finds `slow` at its start (and removes it) takes a minute for each list,
  // its first too: a restart's new instance that would hold the restart while its lists are
  // read. (In a root: the sandbox shows the server nothing else.)
  const slow = (w: string) => join(w, 'keep', 'slow');
  const { w, admin, h, readSecret, removeSec } = await keepAndSecret(t, (w) => [
    '--slow-list=60000',
    `--slow-if=${slow(w)}`,
  ]);
  // A grant restarts it; the new instance is slow to give its lists...
  writeFileSync(slow(w), '');
  await admin.grant('h', join(w, 'extra'), { seconds: 600 });
  await waitFor(() => existsSync(`${slow(w)}.asked`), 30_000, 'the new instance is asked');
  // ...when a change takes a root away: its settling ends, and the next restart is not held up.
  removeSec();
  await waitFor(
    () => h.stderr().includes('the change takes access away: stopping the old server at once'),
    30_000,
    'the second restart begins while the first settles',
  );
  t.match(await readSecret(), /^ENOENT: /, 'the root taken away is gone');
});

void t.test('a change while the new instance opens is not held up by it', async (t) => {
  // The instance that finds `mute` at its start (and removes it) never answers its opening,
  // which the proxy waits a minute for, while it runs with its mounts.
  const mute = (w: string) => join(w, 'keep', 'mute');
  const { w, admin, h, readSecret, removeSec } = await keepAndSecret(t, (w) => [
    `--mute-if=${mute(w)}`,
  ]);
  writeFileSync(mute(w), '');
  await admin.grant('h', join(w, 'extra'), { seconds: 600 });
  await waitFor(() => !existsSync(mute(w)), 30_000, 'the new instance starts');
  // A root taken away meanwhile: the wait ends, and the silent instance is stopped at once.
  removeSec();
  await waitFor(
    () => h.stderr().includes('the change takes access away: stopping the old server at once'),
    30_000,
    'the second restart begins while the new instance opens',
  );
  t.match(h.stderr(), 'a change came before the new server answered initialize');
  t.match(await readSecret(), /^ENOENT: /, 'the next instance serves, without the root');
});

void t.test('a sandbox added to a running session: nothing passes into it', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'keep'), { recursive: true });
  const policy = (sandbox: string) =>
    `version: 1\nservers:\n  h:\n${sandbox}    roots:\n      - path: ${w}/keep\n`;
  const d = await startDaemon(t, policy(''), { dir });
  const h = await startHostile(t, d.socket, {
    flags: [`--keeper=${w}/keep/keeper.sock`, '--slow-list=1500'],
  });
  t.equal(
    (await h.call('attempt', { action: 'write', ref: `${w}/outside.txt` })).text,
    'ok: written',
    'unsandboxed, it writes anywhere',
  );
  d.writePolicy(policy('    sandbox:\n      network: false\n      unixSockets: true\n'));
  const next = await restarted(h, 1, 'the sandbox added');
  t.match(h.stderr(), 'the change takes access away: stopping the old server at once');
  t.not(next.keeper, 'connected', 'the sandboxed instance found no unsandboxed one to help it');
  // Inside, the parents of a root are the sandbox's own: a write there reaches no real file.
  await h.call('attempt', { action: 'write', ref: `${w}/outside2.txt` });
  t.notOk(existsSync(join(w, 'outside2.txt')), 'nothing written outside the roots');
});

void t.test('with --sandbox, the policy dropping its rule keeps the rule', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'keep'), { recursive: true });
  const policy = (sandbox: string) =>
    `version: 1\nservers:\n  h:\n${sandbox}    roots:\n      - path: ${w}/keep\n`;
  const d = await startDaemon(t, policy('    sandbox:\n      network: false\n'), { dir });
  const h = await startHostile(t, d.socket, { proxyArgs: ['--sandbox'] });
  await h.call('launch');
  d.writePolicy(policy(''));
  await waitFor(
    () => h.stderr().includes('keeps its sandbox and last rule'),
    30_000,
    'the rule kept',
  );
  await waitFor(
    () => h.stderr().includes('but not what it is started with: no restart'),
    30_000,
    'no restart: the network stays off',
  );
  t.notMatch(h.stderr(), 'restarting the server:');
});

void t.test('a sandbox.write path through a link in a root is not followed', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['keep', 'cache', 'other', 'extra']) mkdirSync(join(w, d), { recursive: true });
  // The person's own link, in a root the server writes: it could as well be the server's.
  symlinkSync(join(w, 'cache'), join(w, 'keep', 'cache'));
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  h:\n    sandbox:\n      write: [${w}/keep/cache, ${w}/keep/later]\n    roots:\n      - path: ${w}/keep\n`,
    { dir },
  );
  const admin = await d.connect('admin');
  const h = await startHostile(t, d.socket);
  const write = async (ref: string) => (await h.call('attempt', { action: 'write', ref })).text;
  await write(`${w}/cache/a.txt`);
  t.notOk(existsSync(join(w, 'cache', 'a.txt')), 'the link is not followed from the start');
  t.match(h.stderr(), `goes through the link "${w}/keep/cache", which lies in the server`);

  // A path missing at first, which the server makes as a link, then brings a restart about.
  const made = await h.call('attempt', {
    action: 'symlink',
    ref: `${w}/keep/later`,
    to: `${w}/other`,
  });
  t.equal(made.text, 'ok: linked');
  await admin.grant('h', join(w, 'extra'), { seconds: 600 });
  await restarted(h, 1, 'a grant after the link was made');
  await write(`${w}/other/b.txt`);
  t.notOk(existsSync(join(w, 'other', 'b.txt')), 'nor is the one it made');
  t.match(h.stderr(), `goes through the link "${w}/keep/later"`);
});
