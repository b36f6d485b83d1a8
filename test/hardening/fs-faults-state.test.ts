/**
 * Filesystem faults in the daemon's own directories: the socket directory deleted while it runs,
 * and the disk full while it writes the grants file.
 */
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { PINS_FILE } from '../../daemon/pins-file.js';
import { RootsClient } from '../../protocol/client.js';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';
import { spawnDaemon } from '../helpers/spawn-daemon.js';

/**
 * A module beside this test's compiled file, by full URL, for `t.mockImport`: tap resolves a
 * relative name against the caller's source-mapped location (the .ts file in test/), where no
 * compiled module is.
 */
// eslint-disable-next-line no-restricted-syntax -- the compiled module is what is wanted here
const compiled = (rel: string): string => new URL(rel, import.meta.url).href;

const uri = (p: string) => pathToFileURL(p).href;

void t.test('the socket directory deleted while the daemon runs', async (t) => {
  const dir = ownedShortDir(t);
  const runDir = join(dir, 'run');
  const socket = join(runDir, 'rootsd.sock');
  mkdirSync(join(dir, 'root'));
  const config = join(dir, 'mcp-roots.yaml');
  writeFileSync(config, `version: 1\nservers:\n  s:\n    roots:\n      - path: ${dir}/root\n`);
  const daemon = await spawnDaemon(
    ['--config', config, '--socket', socket, '--state-dir', join(dir, 'state')],
    { socket, t },
  );
  const before = await RootsClient.connect({ socket });
  t.teardown(() => before.close());
  t.equal((await before.listRoots('s')).roots.length, 1);

  rmSync(runDir, { recursive: true, force: true });
  const ms = await waitFor(() => existsSync(socket), 30_000, 'the socket is back');
  t.pass(`the directory and the socket were recreated within ${ms} ms`);
  t.equal(statSync(runDir).mode & 0o777, 0o700, 'the directory is 0700 again');
  t.equal(statSync(socket).mode & 0o777, 0o600, 'the socket is 0600 again');
  const after = await RootsClient.connect({ socket });
  t.equal((await after.listRoots('s')).roots.length, 1, 'a new client is served');
  t.equal((await before.listRoots('s')).roots.length, 1, 'an old connection still works');
  await after.close();
  t.match(daemon.stderr(), /disappeared.*recreating/, 'the log says what happened');

  daemon.child.kill('SIGTERM');
  t.equal(await daemon.exited, 0, 'SIGTERM still stops it cleanly');
  t.notOk(existsSync(socket), 'and it removes the socket it recreated');
});

/** Mount a tiny tmpfs at `dir`; false where this machine does not allow it. */
function mountTiny(dir: string): boolean {
  return spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=64k,mode=0700', 'tmpfs', dir]).status === 0;
}

void t.test('the disk full while writing the grants file', async (t) => {
  const dir = ownedShortDir(t);
  const stateDir = join(dir, 'state');
  mkdirSync(stateDir);
  mkdirSync(join(dir, 'g1'));
  mkdirSync(join(dir, 'g2'));
  const file = join(stateDir, 'grants.yaml');
  if (!mountTiny(stateDir)) {
    // A fault the OS will not produce on demand here (no mount): the one case for a mock.
    t.comment('mount is not allowed here: ENOSPC from a mocked node:fs/promises');
    const fsp = await import('node:fs/promises');
    const open = async (...args: Parameters<typeof fsp.open>) => {
      const handle = await fsp.open(...args);
      const writeFile = () =>
        Promise.reject(
          Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }),
        );
      return Object.assign(Object.create(handle) as typeof handle, { writeFile });
    };
    const { writeAtomically } = await t.mockImport<
      typeof import('../../daemon/write-atomically.js')
    >(compiled('../../daemon/write-atomically.js'), { 'node:fs/promises': { ...fsp, open } });
    writeFileSync(file, 'old grants\n');
    await t.rejects(writeAtomically(file, 'new grants\n'), /ENOSPC.*previous file is kept/);
    t.equal(readFileSync(file, 'utf8'), 'old grants\n', 'the old file is kept');
    t.same(stateFiles(stateDir), ['grants.yaml'], 'no temp file is left behind');
    return;
  }
  t.teardown(() => spawnSync('umount', ['-l', stateDir]));
  t.comment('the state directory is a 64 KiB tmpfs: a real ENOSPC');
  const d = await startDaemon(t, `version: 1\nservers: {}\n`, { dir, stateDir });
  const c = await d.connect();
  await c.grant('s', join(dir, 'g1'));
  const before = readFileSync(file, 'utf8');
  t.match(before, /g1/);

  const filler = join(stateDir, 'filler');
  t.throws(() => writeFileSync(filler, Buffer.alloc(256 * 1024)), { code: 'ENOSPC' }, 'disk full');
  const err = await c.grant('s', join(dir, 'g2')).then(
    () => undefined,
    (e: Error) => e,
  );
  t.ok(err, 'the grant fails');
  t.match(err?.message, /ENOSPC.*previous grants are kept/, 'saying why');
  t.equal(readFileSync(file, 'utf8'), before, 'the old file is kept, byte for byte');
  t.same(
    (await c.grants()).grants.map((g) => g.path),
    [join(dir, 'g1')],
    'the old grant is still in force',
  );
  t.same(
    (await c.listRoots('s')).roots.map((r) => r.uri),
    [uri(join(dir, 'g1'))],
    'and served',
  );
  t.same(stateFiles(stateDir), ['filler', 'grants.yaml'], 'no temp file is left behind');

  rmSync(filler);
  await c.grant('s', join(dir, 'g2'));
  t.equal((await c.listRoots('s')).roots.length, 2, 'with room again, grants work');
  await d.close();
});

/**
 * A state directory's files, sorted, without the daemon's own lasting ones (decision log, socket
 * pointer, link pins).
 */
function stateFiles(dir: string): string[] {
  const lasting = new Set(['decisions.jsonl', 'socket-path', PINS_FILE]);
  return readdirSync(dir)
    .filter((f) => !lasting.has(f))
    .sort();
}
