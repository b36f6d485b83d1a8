/**
 * What git reads to run code, beyond the repository's own `.git/config` and `.git/hooks`: each
 * submodule's git directory (`.git/modules/<name>/`, names with slashes, nested), each linked
 * worktree's (`.git/worktrees/<name>/`), `config.worktree` and `commondir` (which sends git to
 * another directory for all of it), a `.git` file (a submodule's or worktree's checkout, naming
 * its git directory), and a git directory assembled anywhere else: git takes any directory
 * holding `HEAD` and `objects`, `refs` or `commondir` for one, and runs what its `config` says on
 * a routine `git status` below it. An agent with one writable root wrote each of these; git then
 * ran its `core.fsmonitor` command as the person. Every such write is now refused, in whatever
 * order the pieces come, and the repository's ordinary contents stay writable.
 *
 * Real daemon, real proxy, the real filesystem server.
 */
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { FS_SERVER, ownedShortDir, startProxiedFs, waitFor } from '../helpers/proxy.js';
import { openSession, startRawHost } from '../helpers/raw-host.js';

const HOOK = '[core]\n\tfsmonitor = "touch /tmp/owned; false"\n';

void t.test('git directories and what points at them cannot be written', async (t) => {
  const dir = ownedShortDir(t);
  const p = join(dir, 'proj');
  for (const d of [
    '.git/objects/ab',
    '.git/refs/heads',
    '.git/hooks',
    '.git/modules/sub/hooks',
    '.git/modules/vendor/lib/modules/inner',
    '.git/worktrees/w1',
    'sub',
    'src/lib',
    'docs/config',
  ])
    mkdirSync(join(p, d), { recursive: true });
  writeFileSync(join(p, '.git/HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(p, '.git/config'), '[core]\n');
  writeFileSync(join(p, '.git/modules/sub/config'), '[core]\n');
  writeFileSync(join(p, '.git/modules/sub/HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(p, 'sub/.git'), 'gitdir: ../.git/modules/sub\n');
  const d = await startDaemon(t, `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${p}\n`, {
    dir,
  });
  const fs = await startProxiedFs(t, { server: 'fs', socket: d.socket });
  await waitFor(async () => (await fs.allowed()).length === 1, 30_000, 'the root');
  const write = (path: string, content = HOOK) =>
    fs.call('write_file', { path: join(p, path), content });
  const refused = async (what: string, call: Promise<{ text: string; isError: boolean }>) => {
    const r = await call;
    t.equal(r.isError, true, `${what}: refused (${r.text.slice(0, 160)})`);
  };
  const allowed = async (what: string, call: Promise<{ text: string; isError: boolean }>) => {
    const r = await call;
    t.equal(r.isError, false, `${what}: allowed (${r.text.slice(0, 160)})`);
  };

  // The repository's own git directories, below .git.
  for (const path of [
    '.git/modules/sub/config',
    '.git/modules/sub/hooks/pre-commit',
    '.git/modules/vendor/lib/modules/inner/config',
    '.git/modules/vendor/lib/config.worktree',
    '.git/worktrees/w1/config.worktree',
    '.git/worktrees/w1/commondir',
    '.git/config.worktree',
    '.git/commondir',
  ])
    await refused(path, write(path));
  t.equal(readFileSync(join(p, '.git/modules/sub/config'), 'utf8'), '[core]\n', 'unchanged');

  // A .git file names the git directory: not rewritten, not made.
  await refused('sub/.git, a submodule checkout’s pointer', write('sub/.git', 'gitdir: ../evil\n'));
  await refused('a new src/.git file', write('src/.git', 'gitdir: ../evil\n'));
  t.equal(readFileSync(join(p, 'sub/.git'), 'utf8'), 'gitdir: ../.git/modules/sub\n', 'kept');

  // A git directory assembled elsewhere: the last piece is refused, whichever it is.
  for (const d of ['src/objects', 'src/refs']) {
    await allowed(d, fs.call('create_directory', { path: join(p, d) }));
  }
  await allowed('src/HEAD beside objects and refs (no code yet)', write('src/HEAD', 'ref: x\n'));
  await refused('src/config then', write('src/config'));
  await refused('src/hooks/post-checkout then', write('src/hooks/post-checkout', '#!/bin/sh\n'));
  await refused('src/commondir then', write('src/commondir', '../../.git\n'));
  await allowed('lib/config first (no git directory yet)', write('src/lib/config'));
  await allowed('lib/HEAD next (no objects or refs yet)', write('src/lib/HEAD', 'ref: x\n'));
  await refused(
    'lib/refs/heads/main last',
    fs.call('create_directory', { path: join(p, 'src/lib/refs/heads') }),
  );
  await refused(
    'lib/objects by a move',
    fs.call('move_file', {
      source: join(p, 'docs/config'),
      destination: join(p, 'src/lib/objects'),
    }),
  );
  writeFileSync(join(p, 'staged.txt'), HOOK);
  await refused(
    'a config moved into src',
    fs.call('move_file', { source: join(p, 'staged.txt'), destination: join(p, 'src/config') }),
  );

  // The pieces sent side by side, in any order, HEAD among them or already there: each write is
  // checked once the ones before it are answered, so the last piece is refused.
  const pieces = (d: string) => [
    () => write(`${d}/config`),
    () => fs.call('create_directory', { path: join(p, d, 'objects') }),
    () => fs.call('create_directory', { path: join(p, d, 'refs/heads') }),
    () => write(`${d}/HEAD`, 'ref: refs/heads/main\n'),
  ];
  for (let round = 0; round < 12; round++) {
    const d = `src/side${round}`;
    mkdirSync(join(p, d));
    const all = pieces(d);
    if (round % 2 === 0) await all.pop()!(); // HEAD first, alone
    if (round % 3 === 1) all.reverse();
    await Promise.all(all.map((piece) => piece()));
    const names = readdirSync(join(p, d));
    const shaped = names.includes('HEAD') && (names.includes('objects') || names.includes('refs'));
    t.notOk(
      shaped && names.includes('config'),
      `round ${round}: no git directory with code (${names.sort().join(' ')})`,
    );
  }

  // What git and a project write stays writable.
  await allowed('.git/objects/ab/cd', write('.git/objects/ab/cd', 'blob'));
  await allowed(
    '.git/refs/heads/config (a branch named config)',
    write('.git/refs/heads/config', 'x'),
  );
  await allowed('.git/HEAD', write('.git/HEAD', 'ref: refs/heads/other\n'));
  await allowed('docs/config/app.yaml', write('docs/config/app.yaml', 'a: 1\n'));
  await allowed('src/main.ts', write('src/main.ts', 'export {};\n'));
});

void t.test('pieces written in one chunk are checked one after another', async (t) => {
  const dir = ownedShortDir(t);
  const p = join(dir, 'proj');
  mkdirSync(join(p, 'src'), { recursive: true });
  const d = await startDaemon(t, `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${p}\n`, {
    dir,
  });
  const host = startRawHost({
    t,
    server: 'fs',
    socket: d.socket,
    serverCommand: [process.execPath, FS_SERVER],
  });
  await openSession(host);
  const call = (id: string, name: string, args: Record<string, unknown>) =>
    JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  for (let round = 0; round < 8; round++) {
    const g = join(p, 'src', `r${round}`);
    mkdirSync(g);
    const lines = [
      call(`c${round}`, 'write_file', { path: join(g, 'config'), content: HOOK }),
      call(`o${round}`, 'create_directory', { path: join(g, 'objects') }),
      call(`f${round}`, 'create_directory', { path: join(g, 'refs') }),
      call(`h${round}`, 'write_file', { path: join(g, 'HEAD'), content: 'ref: refs/heads/main\n' }),
    ];
    // HEAD first and answered in every other round, as an agent retrying would.
    if (round % 2 === 0) {
      host.send(lines.pop()!);
      await host.answer(`h${round}`);
    }
    if (round % 4 >= 2) lines.reverse();
    // The rest in one write to the proxy's input: the checks begin side by side.
    host.send(lines.join('\n'));
    for (const id of ['c', 'o', 'f', 'h']) await host.answer(`${id}${round}`);
    const names = readdirSync(g);
    const shaped = names.includes('HEAD') && (names.includes('objects') || names.includes('refs'));
    t.notOk(
      shaped && names.includes('config'),
      `round ${round}: no git directory with code (${names.sort().join(' ')})`,
    );
  }
});

void t.test('a write no grant would allow is never asked about', async (t) => {
  // Refused as outside every root (or as read-only), the write would be put to the person, and
  // the grant they gave would then be refused anyway: a git directory's code, or a link standing
  // in a denied directory, is refused whatever the grants.
  const dir = ownedShortDir(t);
  for (const g of ['out/g', 'ro/g']) {
    mkdirSync(join(dir, g, 'objects'), { recursive: true });
    writeFileSync(join(dir, g, 'HEAD'), 'ref: refs/heads/main\n');
  }
  mkdirSync(join(dir, 'ro/plain'));
  mkdirSync(join(dir, 'w/secret'), { recursive: true });
  symlinkSync(join(dir, 'out/x.txt'), join(dir, 'w/secret/link'));
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  fs:\n    roots:\n      - {path: ${dir}/ro, readOnly: true}\n      - path: ${dir}/w\n    deny: [${dir}/w/secret]\n`,
    { dir },
  );
  const c = await d.connect();
  for (const [path, kind] of [
    ['out/g/config', 'denied'],
    ['ro/g/config', 'denied'],
    ['w/secret/link', 'denied'],
    ['out/plain.txt', 'outside'],
    ['ro/plain/config', 'read-only'],
  ] as const) {
    const out = await c.check('fs', join(dir, path), 'write');
    t.equal(out.allowed, false, `${path}: refused`);
    t.equal(out.refusal, kind, `${path}: as ${kind} (${out.reason})`);
  }
});
