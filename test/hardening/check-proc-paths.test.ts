/**
 * Paths through `/proc` mean something else in each process: the daemon's `/proc/self/cwd` is its
 * own working directory, not the server's. The check resolved them in the daemon, so with the
 * daemon's working directory inside a root, `/proc/self/cwd/secret` (or a link the server made in
 * its root to `/proc/self/cwd`) was judged as a file inside the root and allowed, while the
 * server opened the secret in its own working directory. Every path that is under `/proc` or goes
 * through a link there is refused: by `roots/check`, by `grants/add`, and so by the proxy.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, startProxied } from '../helpers/proxied-server.js';
import { ownedShortDir } from '../helpers/proxy.js';

/** A root `w` (the daemon's working directory during the test) and `out`, outside every root. */
function tree(t: Parameters<typeof ownedShortDir>[0]) {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  const out = join(dir, 'out');
  mkdirSync(w);
  mkdirSync(out);
  writeFileSync(join(out, 'secret.txt'), 'SECRET');
  writeFileSync(join(w, 'ok.txt'), 'ok');
  symlinkSync('/proc/self/cwd', join(w, 'here'));
  symlinkSync('/', join(w, 'top'));
  symlinkSync('/proc/self/cwd/secret.txt', join(w, 'dangling'));
  const policy =
    `version: 1\nservers:\n  h:\n    roots:\n      - path: ${w}\n` +
    `    tools:\n      attempt:\n        paths: [ref]\n        readOnly: true\n`;
  // The daemon runs in this process: its `/proc/self/cwd` is the root.
  const before = process.cwd();
  process.chdir(w);
  t.teardown(() => process.chdir(before));
  return { dir, w, out, policy };
}

void t.test('roots/check refuses every path through /proc', async (t) => {
  const { dir, w, policy } = tree(t);
  const d = await startDaemon(t, policy, { dir });
  const c = await d.connect();
  const refused = [
    '/proc/self/cwd/ok.txt',
    '/proc/self/cwd/missing.txt',
    '/proc/thread-self/cwd/ok.txt',
    `/proc/${process.pid}/cwd/ok.txt`,
    '/proc/self/root' + w,
    '/proc/cpuinfo',
    '/proc',
    '/proc/self/cwd/../w/ok.txt',
    join(w, 'here/ok.txt'),
    join(w, 'here/missing.txt'),
    join(w, 'here') + '/../w/ok.txt',
    join(w, 'top/proc/self/cwd/ok.txt'),
    join(w, 'dangling'),
    '/dev/fd/0',
    '/dev/stdin',
  ];
  for (const path of refused) {
    for (const access of ['read', 'write'] as const) {
      const out = await c.check('h', path, access);
      t.equal(out.allowed, false, `${access} ${path}: refused`);
      t.equal(out.refusal, 'invalid', `${access} ${path}: as a path no check can judge`);
      t.match(out.reason, /\/proc/, 'the reason names /proc');
    }
  }
  for (const path of [join(w, 'ok.txt'), join(w, 'top', w, 'ok.txt'), `/proc/..${w}/ok.txt`]) {
    const out = await c.check('h', path, 'read');
    t.equal(out.allowed, true, `${path}: allowed, it leads into the root (${out.reason})`);
  }
  await t.rejects(
    c.grant('h', '/proc/self/cwd'),
    /under \/proc/,
    'a grant of /proc/self/cwd (the daemon’s directory, not the caller’s) is refused',
  );
  await t.rejects(c.grant('h', join(w, 'here')), /through \/proc\/self/);
  t.equal((await c.grants()).grants.length, 0, 'nothing was granted');
});

void t.test('the proxy refuses a path through /proc before the server opens it', async (t) => {
  const { dir, w, out, policy } = tree(t);
  const d = await startDaemon(t, policy, { dir });
  // The server's working directory holds the secret; the daemon's is the root.
  const p = await startProxied(t, {
    server: 'h',
    socket: d.socket,
    proxyArgs: ['--cwd', out],
    command: [process.execPath, HOSTILE_SERVER],
  });
  const ok = await p.call('attempt', { action: 'read', ref: join(w, 'ok.txt') });
  t.same(ok, { text: 'ok: ok', isError: false }, 'a file of the root is read');
  for (const ref of [
    '/proc/self/cwd/secret.txt',
    join(w, 'here/secret.txt'),
    join(w, 'dangling'),
  ]) {
    const r = await p.call('attempt', { action: 'read', ref });
    t.equal(r.isError, true, `${ref}: refused`);
    t.notMatch(r.text, 'SECRET', `${ref}: the server never read the secret`);
    t.match(r.text, /\/proc/, `${ref}: the refusal names /proc`);
  }
});
