/**
 * The sandbox's own `read` and `write` paths are held as roots are:
 *
 * - lockdown, and a policy that no longer names the server, take them away with the roots (the
 *   sandbox stays, with nothing in it);
 * - what is denied is hidden in a `read` path at the start, and a deny added there later restarts
 *   the server;
 * - a link on the way to one, lying where the server may write, is never followed: the server may
 *   have made it, in an earlier session too (hosts start a new proxy at each launch).
 *
 * Run with --no-enforce: only the kernel answers.
 */
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { startHostile, type Proxied } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

const attempt = async (h: Proxied, action: string, ref: string) =>
  (await h.call('attempt', { action, ref })).text;

/** Wait for the `n`th restart to be done. */
const restarted = (h: Proxied, n: number, what: string) =>
  waitFor(
    () => h.stderr().split('restarted the server (ms:').length - 1 >= n,
    30_000,
    `${what}\n${h.stderr()}`,
  );

void t.test('lockdown and a removed block take the read and write paths away', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['keep', 'cache', 'ro']) mkdirSync(join(w, d), { recursive: true });
  writeFileSync(join(w, 'ro', 'notes.txt'), 'notes');
  const policy = (named: boolean) =>
    `version: 1\nservers:\n` +
    (named
      ? `  h:\n    sandbox:\n      read: [${w}/ro]\n      write: [${w}/cache]\n    roots:\n      - path: ${w}/keep\n`
      : `  other:\n    roots:\n      - path: ${w}/keep\n`);
  const d = await startDaemon(t, policy(true), { dir });
  const admin = await d.connect('admin');
  const h = await startHostile(t, d.socket, { proxyArgs: ['--allow-unknown-server'] });
  t.equal(await attempt(h, 'write', `${w}/cache/a.txt`), 'ok: written');
  t.equal(await attempt(h, 'read', `${w}/ro/notes.txt`), 'ok: notes');

  await admin.lockdown(true);
  await restarted(h, 1, 'the restart for lockdown');
  t.match(await attempt(h, 'list', `${w}/keep`), /^ENOENT/, 'lockdown: the root is gone');
  await attempt(h, 'write', `${w}/cache/b.txt`);
  t.notOk(existsSync(join(w, 'cache', 'b.txt')), 'lockdown: the write path is gone');
  t.match(await attempt(h, 'read', `${w}/ro/notes.txt`), /^ENOENT/, 'lockdown: the read path');

  await admin.lockdown(false);
  await restarted(h, 2, 'the restart for unlock');
  t.equal(await attempt(h, 'write', `${w}/cache/c.txt`), 'ok: written', 'unlocked: back');

  d.writePolicy(policy(false));
  await restarted(h, 3, 'the restart for the removed block');
  await attempt(h, 'write', `${w}/cache/d.txt`);
  t.notOk(existsSync(join(w, 'cache', 'd.txt')), 'no longer named: the write path is gone');
  t.match(await attempt(h, 'read', `${w}/ro/notes.txt`), /^ENOENT/, 'and the read path');
});

void t.test('what is denied is hidden in a read path, at the start and later', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['keep', 'ro/sub']) mkdirSync(join(w, d), { recursive: true });
  writeFileSync(join(w, 'ro', '.env'), 'TOKEN=1');
  writeFileSync(join(w, 'ro', 'sub', 'key.txt'), 'key');
  writeFileSync(join(w, 'ro', 'notes.txt'), 'notes');
  const policy = (extra: string) =>
    `version: 1\ndeny:\n  - "**/.env"\n${extra}servers:\n  h:\n    sandbox:\n      read: [${w}/ro]\n    roots:\n      - path: ${w}/keep\n`;
  const d = await startDaemon(t, policy(''), { dir });
  const h = await startHostile(t, d.socket);
  t.equal(await attempt(h, 'read', `${w}/ro/notes.txt`), 'ok: notes', 'the read path is there');
  t.notMatch(await attempt(h, 'read', `${w}/ro/.env`), /^ok/, 'a denied file in it is hidden');
  t.equal(await attempt(h, 'read', `${w}/ro/sub/key.txt`), 'ok: key');

  d.writePolicy(policy(`  - ${w}/ro/sub\n`));
  await restarted(h, 1, 'the restart for a deny in the read path');
  t.notMatch(await attempt(h, 'read', `${w}/ro/sub/key.txt`), /^ok/, 'a deny added later too');
  t.equal(await attempt(h, 'read', `${w}/ro/notes.txt`), 'ok: notes');
});

void t.test('a link the server could have made is not followed, in a later session', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['keep', 'elsewhere']) mkdirSync(join(w, d), { recursive: true });
  writeFileSync(join(w, 'elsewhere', 'secret.txt'), 'secret');
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  h:\n    sandbox:\n      read: [${w}/keep/docs]\n      write: [${w}/keep/cache]\n    roots:\n      - path: ${w}/keep\n`,
    { dir },
  );
  // Session 1: the server makes both paths links out of its root (the pins keep them from being
  // followed in this session).
  const one = await startHostile(t, d.socket);
  for (const name of ['cache', 'docs']) {
    const made = await one.call('attempt', {
      action: 'symlink',
      ref: `${w}/keep/${name}`,
      to: join(w, 'elsewhere'),
    });
    t.equal(made.text, 'ok: linked');
  }
  await one.client.close();

  // Session 2: a new proxy, a first layout.
  const two = await startHostile(t, d.socket);
  await attempt(two, 'write', `${w}/keep/cache/planted.txt`);
  t.notOk(existsSync(join(w, 'elsewhere', 'planted.txt')), 'the write path is not followed');
  t.notMatch(await attempt(two, 'read', `${w}/elsewhere/secret.txt`), /^ok/, 'nor the read path');
  t.match(two.stderr(), `goes through the link "${w}/keep/cache", which lies in the server`);
  t.match(two.stderr(), `goes through the link "${w}/keep/docs"`);

  // A link the server cannot have made (outside everything it writes) is followed.
  symlinkSync(join(w, 'elsewhere'), join(w, 'ours'));
  d.writePolicy(
    `version: 1\nservers:\n  h:\n    sandbox:\n      write: [${w}/ours]\n    roots:\n      - path: ${w}/keep\n`,
  );
  await restarted(two, 1, 'the restart for the new write path');
  t.equal(await attempt(two, 'write', `${w}/elsewhere/ours.txt`), 'ok: written');
});

void t.test(
  'a read or write path that is denied, or lies in a denied one, is left out',
  async (t) => {
    const dir = ownedShortDir(t);
    const w = join(dir, 'w');
    for (const d of ['keep', 'secret/sub', 'vault/cache', 'proj/.ssh', 'fine'])
      mkdirSync(join(w, d), { recursive: true });
    writeFileSync(join(w, 'secret', 'sub', 'key.txt'), 'key');
    writeFileSync(join(w, 'proj', '.ssh', 'id'), 'private');
    writeFileSync(join(w, 'fine', 'notes.txt'), 'notes');
    const d = await startDaemon(
      t,
      `version: 1\ndeny:\n  - ${w}/secret\n  - ${w}/vault\n  - "**/.ssh"\nservers:\n  h:\n    sandbox:\n      read: [${w}/secret/sub, ${w}/proj/.ssh, ${w}/fine]\n      write: [${w}/vault/cache]\n    roots:\n      - path: ${w}/keep\n`,
      { dir },
    );
    const h = await startHostile(t, d.socket);
    t.notMatch(await attempt(h, 'read', `${w}/secret/sub/key.txt`), /^ok/, 'in a denied directory');
    t.notMatch(await attempt(h, 'read', `${w}/proj/.ssh/id`), /^ok/, 'matched by a **/ deny');
    await attempt(h, 'write', `${w}/vault/cache/planted.txt`);
    t.notOk(existsSync(join(w, 'vault', 'cache', 'planted.txt')), 'a write path in a denied one');
    t.equal(await attempt(h, 'read', `${w}/fine/notes.txt`), 'ok: notes', 'the others are there');
    t.match(h.stderr(), `the sandbox path "${w}/secret/sub" is denied`);
  },
);

void t.test('read-only things inside a write path stay read-only', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['work/ref', 'work/ro']) mkdirSync(join(w, d), { recursive: true });
  const policy = (nested: boolean) =>
    `version: 1\nservers:\n  h:\n    sandbox:\n      read: [${w}/work/ref]\n      write: [${w}/work]\n    roots:\n      - path: ${w}/work/ro\n        readOnly: true\n` +
    (nested ? `      - path: ${w}/work/late\n        readOnly: true\n` : '');
  mkdirSync(join(w, 'work', 'late'));
  const d = await startDaemon(t, policy(false), { dir });
  const h = await startHostile(t, d.socket);
  t.equal(await attempt(h, 'write', `${w}/work/a.txt`), 'ok: written', 'the write path is');
  t.match(await attempt(h, 'write', `${w}/work/ro/b.txt`), /^EROFS/, 'a read-only root in it');
  t.match(await attempt(h, 'write', `${w}/work/ref/c.txt`), /^EROFS/, 'a read path in it');
  // A read-only root added inside it later narrows it: the old instance is stopped at once.
  d.writePolicy(policy(true));
  await restarted(h, 1, 'the restart for a read-only root inside the write path');
  t.match(h.stderr(), 'the change takes access away: stopping the old server at once');
  t.match(await attempt(h, 'write', `${w}/work/late/d.txt`), /^EROFS/);
});

void t.test('lockdown reaches a server whose list was empty already', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['cache', 'ro']) mkdirSync(join(w, d), { recursive: true });
  writeFileSync(join(w, 'ro', 'notes.txt'), 'notes');
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  h:\n    sandbox:\n      read: [${w}/ro]\n      write: [${w}/cache]\n    roots:\n      - path: ${w}/not-there-yet\n`,
    { dir },
  );
  const admin = await d.connect('admin');
  const h = await startHostile(t, d.socket);
  t.equal(await attempt(h, 'write', `${w}/cache/a.txt`), 'ok: written', 'before lockdown');
  await admin.lockdown(true);
  await restarted(h, 1, 'the restart for lockdown, with no list to change');
  await attempt(h, 'write', `${w}/cache/b.txt`);
  t.notOk(existsSync(join(w, 'cache', 'b.txt')), 'lockdown: the write path is gone');
  t.match(await attempt(h, 'read', `${w}/ro/notes.txt`), /^ENOENT/, 'and the read path');
});

void t.test('a link made while its root was writable is not followed once it is not', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['keep', 'elsewhere']) mkdirSync(join(w, d), { recursive: true });
  writeFileSync(join(w, 'elsewhere', 'secret.txt'), 'secret');
  const policy = (readOnly: boolean) =>
    `version: 1\nservers:\n  h:\n    sandbox:\n      read: [${w}/keep/docs]\n    roots:\n      - path: ${w}/keep\n        readOnly: ${readOnly}\n`;
  const d = await startDaemon(t, policy(false), { dir });
  const one = await startHostile(t, d.socket);
  const made = await one.call('attempt', {
    action: 'symlink',
    ref: `${w}/keep/docs`,
    to: join(w, 'elsewhere'),
  });
  t.equal(made.text, 'ok: linked');
  // The person makes the root read-only, and the host starts the server again.
  d.writePolicy(policy(true));
  await restarted(one, 1, 'the restart for the read-only root');
  await one.client.close();
  const two = await startHostile(t, d.socket);
  t.notMatch(await attempt(two, 'read', `${w}/elsewhere/secret.txt`), /^ok/, 'not followed');
  t.match(two.stderr(), `goes through the link "${w}/keep/docs"`);
});
