/**
 * A sandboxed server renames, with its own system calls, a directory *above* what the sandbox
 * mounts over: the parent of a denied directory, of a protected file, of a nested read-only root.
 * A mount point itself cannot be renamed (EBUSY), but a directory holding one can, and the mount
 * moves with it: nothing changes in the running sandbox. On the host, though, the denied or
 * read-only content now lies under a name no rule names, so at the next restart (which the server
 * can cause by making any denied name, here a `.env`) the layout no longer covers it: the server
 * reads the secret, or writes the read-only files and moves them back.
 *
 * Each row is what the server attempts, then what must hold on the host and in the sandbox.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import {
  changeUntilReported,
  restartsIdle,
  serverForcesRestart,
  startBoxed,
} from '../helpers/boxed-server.js';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

const SECRET = 'TOKEN=moved out';
const KEPT = 'kept as the person wrote it';

void t.test('renaming what holds a mount does not uncover it at the next restart', async (t) => {
  const dir = ownedShortDir(t);
  const r = join(dir, 'w', 'r');
  const plant = (p: string, text: string) => {
    mkdirSync(join(p, '..'), { recursive: true });
    writeFileSync(p, text);
  };
  plant(join(r, 'proj', 'secrets', 'k.txt'), SECRET);
  plant(join(r, 'deep', 'a', 'b', 'vault', 'k.txt'), SECRET);
  plant(join(r, 'cfg', 'secrets', 'k.json'), SECRET);
  plant(join(r, 'app', 'vendor', 'lib.js'), KEPT);
  plant(join(r, 'repo', '.git', 'config'), KEPT);
  mkdirSync(join(r, 'x'));
  writeFileSync(join(r, 'notes.txt'), 'notes');
  const policy = `version: 1
servers:
  h:
    roots:
      - path: ${r}
      - path: ${join(r, 'app', 'vendor')}
        readOnly: true
    deny:
      - ${join(r, 'proj', 'secrets')}
      - ${join(r, 'deep', 'a', 'b', 'vault')}
      - "**/secrets/*.json"
      - "**/.env"
      - path: ${join(r, '*', '.git')}
        access: write
`;
  const d = await startDaemon(t, policy, { dir });
  const boxed = await startBoxed(t, d.socket);
  const attempt = (action: string, ref: string, to = '') =>
    boxed.call('attempt', { action, ref, to });
  t.match((await attempt('read', join(r, 'notes.txt'))).text, /^ok: notes$/, 'the server is up');

  let restarts = 0;
  /** The server makes a denied name appear, and the proxy restarts it with a new layout. */
  const restart = (why: string) => serverForcesRestart(boxed, join(r, `trigger${++restarts}`), why);

  /** [what, renames (from, to), the files that must then not show the secret] */
  const reads: [string, [string, string][], string[]][] = [
    // Held before: a mount point itself cannot be renamed (EBUSY).
    ['the denied directory itself', [['proj/secrets', 'proj/open']], ['proj/open/k.txt']],
    [
      'the parent of a denied directory',
      [['proj', 'proj2']],
      ['proj2/secrets/k.txt', 'proj/secrets/k.txt'],
    ],
    [
      'a grandparent of a denied directory, three levels up',
      [['deep/a', 'deep/z']],
      ['deep/z/b/vault/k.txt', 'deep/a/b/vault/k.txt'],
    ],
    [
      'the directory a multi-segment pattern matches through',
      [['cfg/secrets', 'cfg/open']],
      ['cfg/open/k.json', 'cfg/secrets/k.json'],
    ],
  ];
  for (const [what, renames, files] of reads) {
    for (const [from, to] of renames) await attempt('rename', join(r, from), join(r, to));
    await restart(what);
    for (const f of files) {
      const got = await attempt('read', join(r, f));
      t.equal(got.isError, true, `${what}: ${f} is not readable`);
      t.notMatch(got.text, /TOKEN/, `${what}: nothing of ${f} is shown`);
    }
  }

  /** [what, the file that must keep its contents, rename away, the name to write it under] */
  const writes: [string, string, [string, string], string][] = [
    [
      'the parent of a nested read-only root',
      'app/vendor/lib.js',
      ['app', 'app2'],
      'app2/vendor/lib.js',
    ],
    [
      'the repository above a write-denied .git (the example policy’s `~/projects/*/.git`)',
      'repo/.git/config',
      ['repo', 'x/repo'],
      'x/repo/.git/config',
    ],
  ];
  for (const [what, file, [from, to], under] of writes) {
    await attempt('rename', join(r, from), join(r, to));
    await restart(what);
    await attempt('write', join(r, under));
    // And back, so that the person finds the file where it was.
    await attempt('rename', join(r, to), join(r, from));
    t.equal(readFileSync(join(r, file), 'utf8'), KEPT, `${what}: ${file} is unchanged`);
  }

  // What it costs is bounded: a directory holding a `**/.env` match stays free to rename (the
  // pattern follows the name), and the moved .env is still hidden after a restart.
  // The .env appears under its new name as the rename is made: the proxy's watch reports it and
  // restarts the server, maybe before it answers ("call again"), so the rename is looked for on
  // the host and the next call waits for that restart to end.
  await changeUntilReported(boxed, 'the .env moved with its directory', () =>
    attempt('rename', join(r, 'trigger1'), join(r, 'moved')).catch(() => undefined),
  );
  t.ok(
    existsSync(join(r, 'moved', '.env')) && !existsSync(join(r, 'trigger1')),
    'a directory holding a .env is renamed',
  );
  await waitFor(() => restartsIdle(boxed), 30_000, 'the restart after the move');
  const env = await attempt('read', join(r, 'moved', '.env'));
  t.equal(env.isError, true, `the moved .env is still hidden: ${env.text}`);
});
