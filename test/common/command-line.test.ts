/**
 * How hints name this installation's commands: the bare name when that name on PATH is this
 * installation, `npx NAME` under npm exec, else `node` and the built file, relative to the working
 * directory when inside it.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { commandOf, withSocket } from '../../common/command-line.js';
import { REPO } from '../helpers/bin.js';
import { shortDir } from '../helpers/short-dir.js';

const dir = shortDir();
const ours = join(dir, 'ours');
const other = join(dir, 'other');
const empty = join(dir, 'empty');
for (const d of [ours, other, empty]) mkdirSync(d);
symlinkSync(join(REPO, 'dist/cli/main.js'), join(ours, 'rootsctl'));
symlinkSync(join(REPO, 'dist/daemon/main.js'), join(ours, 'mcp-rootsd'));
// Another installation's rootsctl, first on PATH: not this one, so not named.
writeFileSync(join(other, 'rootsctl'), '#!/bin/sh\n');

const CASES: [string, Record<string, string>, string | undefined, string][] = [
  ['in a clone, nothing on PATH', { PATH: empty }, REPO, 'node dist/cli/main.js'],
  // Not `node ../dist/cli/main.js`: a path out of the directory is shown whole.
  [
    'in a subdirectory of the clone',
    { PATH: empty },
    join(REPO, 'docs'),
    `node ${join(REPO, 'dist/cli/main.js')}`,
  ],
  ['elsewhere', { PATH: empty }, dir, `node ${join(REPO, 'dist/cli/main.js')}`],
  [
    'no working directory (a host)',
    { PATH: empty },
    undefined,
    `node ${join(REPO, 'dist/cli/main.js')}`,
  ],
  ['installed on PATH', { PATH: `${empty}:${ours}` }, dir, 'rootsctl'],
  [
    'another installation first on PATH',
    { PATH: `${other}:${ours}` },
    REPO,
    'node dist/cli/main.js',
  ],
  [
    'relative PATH entries are skipped',
    { PATH: `.:${empty}` },
    ours,
    `node ${join(REPO, 'dist/cli/main.js')}`,
  ],
  ['under npm exec', { PATH: ours, npm_command: 'exec' }, REPO, 'npx rootsctl'],
  // A host's `npx mcp-roots-proxy`: its directory is not the person's.
  [
    'under npm exec, no working directory',
    { PATH: ours, npm_command: 'exec' },
    undefined,
    'rootsctl',
  ],
  ['no PATH at all', {}, REPO, 'node dist/cli/main.js'],
];

for (const [name, env, cwd, want] of CASES) {
  t.equal(commandOf('rootsctl', { env, cwd }), want, name);
}

t.equal(commandOf('mcp-rootsd', { env: { PATH: ours }, cwd: dir }), 'mcp-rootsd', 'the daemon too');
t.equal(
  commandOf('mcp-rootsd', { env: { PATH: empty }, cwd: REPO }),
  'node dist/daemon/main.js',
  'the daemon from a clone',
);
t.equal(withSocket('rootsctl', undefined), 'rootsctl');
t.equal(withSocket('rootsctl', '.tmp/demo/rootsd.sock'), 'rootsctl --socket .tmp/demo/rootsd.sock');
t.equal(
  withSocket('rootsctl', '/a b/s.sock'),
  "rootsctl --socket '/a b/s.sock'",
  'quoted for a shell',
);
