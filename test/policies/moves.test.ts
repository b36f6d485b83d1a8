/**
 * docs/policy.md "Moves": a write of a directory (or of a path where nothing is yet) is refused
 * when a deny, protected path or read-only root could match inside it in a way that depends on
 * where it is. Three tables: the pattern question alone, patterns × moves on a real tree, and
 * ordinary work under the starter policy that must stay allowed.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { starterPolicy } from '../../cli/commands/init.js';
import { compileDeny } from '../../policies/deny.js';
import { expandSlashBraces, positionDependent } from '../../policies/descendants.js';
import { loadAndResolve, nodeFs } from '../../policies/index.js';
import { contextFor, evaluate, makeTree } from '../helpers/policy.js';
import { repoPath } from '../helpers/repo.js';

/** [pattern (H = a fixed absolute prefix), path (H-relative), position-dependent?] */
const PATTERN_ROWS: [string, string, boolean][] = [
  // one segment after **: the same descendants match wherever the directory goes
  ['**/.env', 'H/proj/app', false],
  ['**/.env', 'H/proj/private', false],
  ['**/*.pem', 'H/proj/keys', false],
  ['**/[.]git', 'H/proj', false],
  ['**/.git/**', 'H/proj/app', false],
  ['**/.git/**', 'H/proj/app/src', false],
  // more segments: a directory whose own last segments advance the pattern depends on its place
  ['**/private/*.txt', 'H/proj/private', true],
  ['**/private/*.txt', 'H/proj/pub', false],
  ['**/private/*.txt', 'H/proj/private/sub', false],
  ['**/.vscode/mcp.json', 'H/proj/.vscode', true],
  ['**/.vscode/mcp.json', 'H/proj/staging', false],
  ['**/a/b/c', 'H/x/a', true],
  ['**/a/b/c', 'H/x/a/b', true],
  ['**/a/b/c', 'H/x/a/q', false],
  ['**/a/**/c', 'H/x/a/q/r', true],
  ['**/a/**/c', 'H/x/q/r', false],
  ['**/*/key.txt', 'H/anything', true],
  ['**/{private,secret}/*.txt', 'H/proj/secret', true],
  ['**/{a/b,c}/k', 'H/x/a', true],
  ['**/{a/b,c}/k', 'H/x/c', true],
  ['**/{a/b,c}/k', 'H/x/b', false],
  // anchored globs: any directory on the way to a match, and any under a `**` after the base
  ['H/proj/*/key.txt', 'H/proj/app', true],
  ['H/proj/*/key.txt', 'H/proj', true],
  ['H/proj/*/key.txt', 'H', true],
  ['H/proj/*/key.txt', 'H/proj/app/src', false],
  ['H/proj/*/key.txt', 'H/other', false],
  ['H/proj/**/key.txt', 'H/proj/app/src', true],
  ['H/proj/**/key.txt', 'H/other/app', false],
  // a path thousands of segments long (only the last names decide for `**/a/b`), and a
  // pattern of more segments than one state set holds
  ['**/a/b/c', `H/${'q/'.repeat(1500)}x/a/b`, true],
  ['**/a/b/c', `H/x/a/b/${'q/'.repeat(1500)}r`, false],
  ['**/.vscode/mcp.json', `H/${'d/'.repeat(1500)}.vscode`, true],
  ['**/a/**/c', `H/x/a/${'q/'.repeat(1500)}r`, true],
  ['**/a/**/c', `H/${'q/'.repeat(1500)}r`, false],
  [`H/${'s/'.repeat(32)}*/key`, 'H/s/s', true],
  [`H/${'s/'.repeat(32)}*/key`, `H/${'s/'.repeat(32)}x`, true],
  [`H/${'s/'.repeat(32)}*/key`, 'H/t', false],
  // literal paths: only their ancestors
  ['H/proj/app/secret', 'H/proj/app', true],
  ['H/proj/app/secret', 'H/proj', true],
  ['H/proj/app/secret', 'H/proj/app/secret2', false],
  ['H/proj/app/secret', 'H/proj/ap', false],
];

void t.test('which patterns depend on the position of a directory', async (t) => {
  const dir = t.testdir({});
  const fs = nodeFs();
  for (const [pattern, path, want] of PATTERN_ROWS) {
    const abs = pattern.replace(/^H/, dir);
    const rule = await compileDeny(fs, abs, 'all', { source: 'deny', display: abs, inMeta: true });
    t.equal(positionDependent(rule, path.replace(/^H/, dir)), want, `${pattern} at ${path}`);
  }
});

void t.test('brace groups holding a slash are expanded, and too many refuse', async (t) => {
  t.same(expandSlashBraces('**/{a/b,c}/k'), ['**/a/b/k', '**/c/k']);
  t.same(expandSlashBraces('**/{a,b}/k'), ['**/{a,b}/k'], 'a group within one segment stays');
  t.same(expandSlashBraces('**/{a/{b,c/d},e}'), ['**/a/b', '**/a/c/d', '**/e']);
  t.equal(expandSlashBraces('**/{a/b'), undefined, 'unbalanced');
  const many = '**/' + Array.from({ length: 4 }, () => '{a/b,c/d,e/f,g/h}').join('/');
  t.equal(expandSlashBraces(many), undefined, '256 alternatives');
  const rule = await compileDeny(nodeFs(), many, 'all', {
    source: 'deny',
    display: many,
    inMeta: true,
  });
  t.equal(positionDependent(rule, '/x/y'), true, 'what cannot be analysed refuses');
});

/**
 * Patterns × moves, the table of docs/policy.md "Moves", in one writable root `proj` with the
 * home at `home/`. Each move is two write checks, as mcp-roots-proxy asks them (source, then
 * destination); a cell says which refuses: `ok` (neither), `from`, `to` or `both`.
 */
const TREE = [
  'home/stage/mcp.json',
  'proj/notes/a.md',
  'proj/private/key.txt',
  'proj/pub/',
  'proj/app/src/main.js',
  'proj/app/vendor/lib.js',
  'proj/app/secret/s.txt',
  'proj/app/.git/HEAD',
];
const MOVES: [string, string][] = [
  ['proj/notes', 'proj/notes2'],
  ['proj/private', 'proj/pub2'],
  ['proj/pub', 'proj/app/private'],
  ['proj/app', 'proj/app2'],
  ['proj/app/src', 'proj/app/src2'],
  ['proj/notes', 'proj/app/notes'],
  ['home/stage', 'proj/.vscode'],
  ['proj/notes', 'proj/app/.git'],
];
type Cell = 'ok' | 'from' | 'to' | 'both';
/** [what the policy adds (deny entry, or a read-only root), one cell per move] */
const MATRIX: [string, Cell[]][] = [
  ["deny: '**/.env'", ['ok', 'ok', 'ok', 'ok', 'ok', 'ok', 'to', 'to']],
  ["deny: '**/private/*.txt'", ['ok', 'from', 'to', 'ok', 'ok', 'ok', 'to', 'to']],
  ['deny: DIR/proj/*/key.txt', ['both', 'both', 'from', 'both', 'ok', 'from', 'to', 'both']],
  ['deny: DIR/proj/**/key.txt', ['both', 'both', 'both', 'both', 'both', 'both', 'to', 'both']],
  ['deny: DIR/proj/app/secret', ['ok', 'ok', 'ok', 'from', 'ok', 'ok', 'to', 'to']],
  ['root: DIR/proj/app/vendor', ['ok', 'ok', 'ok', 'from', 'ok', 'ok', 'to', 'to']],
];

void t.test('patterns × moves', async (t) => {
  const dir = t.testdir({});
  makeTree(dir, TREE);
  for (const [adds, cells] of MATRIX) {
    const extra = adds.replaceAll('DIR', dir);
    const policy = `version: 1
${extra.startsWith('deny: ') ? `deny:\n  - ${extra.slice(6)}\n` : ''}servers:
  s:
    roots:
      - path: ${dir}/proj
        readOnly: false
      - path: ${dir}/home
        readOnly: false
${extra.startsWith('root: ') ? `      - path: ${extra.slice(6)}\n        readOnly: true\n` : ''}`;
    const ev = await evaluate(dir, policy, contextFor(dir));
    t.same(ev.errors, [], `policy for ${adds}`);
    for (const [i, [from, to]] of MOVES.entries()) {
      const a = await ev.resolved.check('s', join(dir, from), 'write');
      const b = await ev.resolved.check('s', join(dir, to), 'write');
      const got: Cell = a.allowed ? (b.allowed ? 'ok' : 'to') : b.allowed ? 'from' : 'both';
      t.equal(got, cells[i], `${adds}: ${from} -> ${to}: ${a.reason} / ${b.reason}`);
    }
  }
});

/** Ordinary work in a writable project under the policy `rootsctl init` writes: all allowed. */
const ORDINARY: [string, string][] = [
  ['write a new file', 'projects/app/new.ts'],
  ['write a new file in a new-named dir', 'projects/app/src'],
  ['overwrite an existing file', 'projects/app/src/main.ts'],
  ['create a directory', 'projects/app/lib'],
  ['create a nested directory', 'projects/app/src/util'],
  ['create a dot directory', 'projects/app/.github'],
  ['rename a directory (source)', 'projects/app/src'],
  ['rename a directory (destination)', 'projects/app/source'],
  ['move a file', 'projects/app/README.md'],
  ['rename the project', 'projects/app'],
  ['a private directory, for a policy without such a deny', 'projects/app/private'],
  ['a file in .git', 'projects/app/.git/info/exclude'],
  ['a node_modules directory', 'projects/app/node_modules'],
];

void t.test('ordinary work under the starter policy stays allowed', async (t) => {
  const dir = t.testdir({});
  makeTree(dir, [
    'home/projects/app/src/main.ts',
    'home/projects/app/README.md',
    'home/projects/app/.git/HEAD',
  ]);
  const policy = starterPolicy('roots.schema.json').replace(
    '      - path: ~/projects # read-only (the default above)',
    '      - path: ~/projects\n        readOnly: false',
  );
  const ev = await evaluate(join(dir, 'home'), policy, contextFor(dir));
  t.same(ev.errors, []);
  let allowed = 0;
  for (const [what, rel] of ORDINARY) {
    const res = await ev.resolved.check('filesystem', join(dir, 'home', rel), 'write');
    t.ok(res.allowed, `${what}: ${res.reason}`);
    if (res.allowed) allowed++;
  }
  t.equal(allowed, ORDINARY.length, 'no false refusal in ordinary work');
});

/** The example policies, each writable directory root: new files, new directories, renames. */
void t.test('ordinary work under the example policies stays allowed', async (t) => {
  const dir = t.testdir({});
  const projects = ['my-app', 'myproject', 'payments', 'website', 'other'];
  makeTree(dir, [
    ...projects.map((p) => `home/projects/${p}/src/main.ts`),
    ...projects.map((p) => `home/projects/${p}/.git/HEAD`),
    'home/repos/a/src/x.ts',
    'home/Downloads/src/x',
    'home/Documents/reports/src/x',
    'home/work/current/src/x',
    'home/work/handbook/src/x',
    'home/work/team/src/x',
    'home/personal/src/x',
    'home/shared/snippets/src/x',
  ]);
  const home = join(dir, 'home');
  const ctx = contextFor(dir, { env: { HOME: home } });
  const examples = repoPath('examples');
  const names = ['filesystem', 'contractor', 'work-editor', 'personal-notes', 'anyone'];
  let checked = 0;
  for (const file of [
    'mcp-roots.yaml',
    'one-project-writable.yaml',
    'time-boxed.yaml',
    'work-personal.yaml',
  ]) {
    const ev = await loadAndResolve({ configFile: join(examples, file) }, ctx);
    t.same(ev.errors, [], `${file} loads`);
    for (const server of names) {
      for (const root of ev.resolved.roots(server)) {
        const path = fileURLToPath(root.uri);
        if (root._meta['mcp-roots/readOnly'] || !existsSync(join(path, 'src'))) continue;
        for (const rel of ['new.txt', 'newdir', 'src', 'src-renamed', 'src/main.ts', 'src/util']) {
          const res = await ev.resolved.check(server, join(path, rel), 'write');
          t.ok(res.allowed, `${file}, ${server}: write ${join(path, rel)}: ${res.reason}`);
          checked++;
        }
      }
    }
  }
  t.ok(checked >= 60, `${checked} ordinary writes checked`);
});
