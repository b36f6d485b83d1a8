/**
 * What stands where a policy file should be: the main file, an include or a file an include glob
 * matches may be a FIFO, a device or a huge file. Read as a file, a FIFO held the read (and a
 * thread of libuv's four) forever, and /dev/zero filled the memory until the process died. Each is
 * refused with what it is, where, and the last good policy keeps serving the daemon.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import t from 'tap';
import { rootsctl } from '../helpers/cli.js';
import { shortDir, startDaemon } from '../helpers/daemon.js';

function mkfifo(path: string): void {
  const made = spawnSync('mkfifo', [path]);
  if (made.status !== 0) throw new Error(`mkfifo ${path}: ${String(made.stderr)}`);
}

/**
 * Each row: what the include (or main file) is made into, what validate must say, and whether an
 * include glob (of files) leaves it out instead: it takes what a link leads to, and a directory
 * or a device is not a file.
 */
const KINDS: [string, (path: string) => void, RegExp, boolean][] = [
  ['a FIFO', mkfifo, /is not a regular file/, false],
  ['a link to /dev/zero', (p) => symlinkSync('/dev/zero', p), /is not a regular file/, true],
  ['a link to /dev/null', (p) => symlinkSync('/dev/null', p), /is not a regular file/, true],
  [
    'a 5 GiB sparse file',
    (p) => {
      writeFileSync(p, '');
      truncateSync(p, 5 * 1024 ** 3);
    },
    /file is 5120\.0 MiB; a policy file may be at most 1 MiB/,
    false,
  ],
  ['a directory', (p) => mkdirSync(p), /is a directory, not a policy file/, true],
];

const SERVERS = (dir: string) => `servers:\n  fs:\n    roots: [{path: ${dir}/w}]\n`;

for (const [kind, make, says, globSkips] of KINDS) {
  void t.test(`an include that is ${kind}`, async (t) => {
    const dir = shortDir();
    mkdirSync(join(dir, 'w'));
    make(join(dir, 'inc.yaml'));
    const main = join(dir, 'mcp-roots.yaml');
    writeFileSync(main, `version: 1\ninclude: [inc.yaml]\n${SERVERS(dir)}`);
    const r = await rootsctl(['validate', main]);
    t.not(r.code, 0, 'validate fails');
    t.match(r.out + r.err, says, 'and says why');
  });

  void t.test(`a file an include glob matches that is ${kind}`, async (t) => {
    const dir = shortDir();
    mkdirSync(join(dir, 'w'));
    mkdirSync(join(dir, 'incs'));
    writeFileSync(join(dir, 'incs', 'a.yaml'), 'version: 1\n');
    make(join(dir, 'incs', 'b.yaml'));
    const main = join(dir, 'mcp-roots.yaml');
    writeFileSync(main, `version: 1\ninclude: [incs/*.yaml]\n${SERVERS(dir)}`);
    const r = await rootsctl(['validate', main]);
    if (globSkips) t.equal(r.code, 0, 'the glob leaves it out');
    else {
      t.not(r.code, 0, 'validate fails');
      t.match(r.out + r.err, says, 'and says why');
    }
  });

  void t.test(`a main policy file that is ${kind}`, async (t) => {
    const dir = shortDir();
    const main = join(dir, 'mcp-roots.yaml');
    make(main);
    const r = await rootsctl(['validate', main]);
    t.not(r.code, 0, 'validate fails');
    t.match(r.out + r.err, says, 'and says why');
  });
}

void t.test(
  'a daemon whose include becomes a FIFO or a device keeps its last good policy',
  async (t) => {
    const dir = shortDir();
    mkdirSync(join(dir, 'w'));
    const inc = join(dir, 'inc.yaml');
    writeFileSync(inc, 'version: 1\n');
    const d = await startDaemon(t, `version: 1\ninclude: [${inc}]\n${SERVERS(dir)}`, { dir });
    const c = await d.connect();
    for (const [kind, make, says] of KINDS) {
      spawnSync('rm', ['-rf', inc]);
      make(inc);
      const reload = await c.reload();
      t.equal(reload.ok, false, `${kind}: the reload fails`);
      t.match(JSON.stringify(reload.errors), says, `${kind}: and says why`);
      t.same(
        d.daemon.state.roots('fs').map((r) => r.uri),
        [`file://${dir}/w`],
        `${kind}: the last good policy serves`,
      );
    }
  },
);

void t.test('an include that is a Unix socket', async (t) => {
  const dir = shortDir();
  mkdirSync(join(dir, 'w'));
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(join(dir, 'inc.yaml'), resolve));
  t.teardown(() => server.close());
  const main = join(dir, 'mcp-roots.yaml');
  writeFileSync(main, `version: 1\ninclude: [inc.yaml]\n${SERVERS(dir)}`);
  const r = await rootsctl(['validate', main]);
  t.not(r.code, 0, 'validate fails');
  t.match(r.out + r.err, /is not a regular file/, 'and says what it is, not a permission problem');
});
