/**
 * The policy's extra writable paths (`sandbox.write`) are writable as a root is, but the sandbox
 * laid out denies and protected paths only in roots: in a `sandbox.write` path a denied file was
 * readable, a `**\/.env` too, and a write-denied directory writable, to the sandboxed server's
 * own system calls. Such a path now gets the server's denies and protected paths as a writable
 * root does: denied for reading hidden, denied for writing read-only, and a denied path that
 * appears there later restarts the server.
 *
 * Real daemon, real proxy under bubblewrap, the hostile fixture server.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { startBoxedHostile } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

const MARK = 'MARK-denied';

void t.test('denies and protected paths hold in a sandbox.write path', async (t) => {
  const dir = ownedShortDir(t);
  const r = join(dir, 'r');
  const x = join(dir, 'x');
  for (const d of [r, join(x, 'secret'), join(x, 'app'), join(x, 'ro')]) {
    mkdirSync(d, { recursive: true });
  }
  writeFileSync(join(x, 'secret/k.txt'), MARK);
  writeFileSync(join(x, 'app/.env'), MARK);
  writeFileSync(join(x, 'app/ok.txt'), 'OK');
  const policy =
    `version: 1\ndeny:\n  - ${x}/secret\n  - "**/.env"\n  - {path: ${x}/ro, access: write}\n` +
    `servers:\n  h:\n    roots:\n      - path: ${r}\n        readOnly: true\n    sandbox:\n      write: [${x}]\n`;
  const d = await startDaemon(t, policy, { dir });
  const { boxed, attempt } = await startBoxedHostile(t, d.socket);

  t.match((await attempt('read', join(x, 'app/ok.txt'))).text, /^ok: OK/, 'the path is readable');
  t.match((await attempt('write', join(x, 'app/new.txt'))).text, /^ok/, 'and writable');
  for (const [what, path] of [
    ['a denied directory', join(x, 'secret/k.txt')],
    ['a file a **/ deny matches', join(x, 'app/.env')],
  ]) {
    const read = await attempt('read', path!);
    t.notMatch(read.text, MARK, `${what}: not read: ${read.text}`);
    t.equal(read.isError, true, `${what}: an error`);
  }
  const listed = await attempt('list', join(x, 'secret'));
  t.notMatch(listed.text, /k\.txt/, `the denied directory lists nothing: ${listed.text}`);
  const wrote = await attempt('write', join(x, 'ro/f.txt'));
  t.match(wrote.text, /^EROFS/, `a write-denied directory is read-only: ${wrote.text}`);
  t.notOk(existsSync(join(x, 'ro/f.txt')), 'and nothing was written there');

  // A denied file that appears later: watched as in a root, the server restarted without it.
  mkdirSync(join(x, 'later'));
  writeFileSync(join(x, 'later/.env'), MARK);
  await waitFor(
    () => /restarting the server: a denied path appeared in its roots/.test(boxed.stderr()),
    30_000,
    'the proxy restarts the server for the new denied file',
  );
  await waitFor(
    async () =>
      (await attempt('read', join(x, 'app/ok.txt')).catch(() => ({ text: '' }))).text.startsWith(
        'ok',
      ),
    30_000,
    'the restarted server answers',
  );
  const later = await attempt('read', join(x, 'later/.env'));
  t.notMatch(later.text, MARK, `the new denied file is not read: ${later.text}`);
});
