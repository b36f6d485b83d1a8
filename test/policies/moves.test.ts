/**
 * docs/policy.md "Moves": a write of a directory (or of a path where nothing is yet) is refused
 * when a deny, protected path or read-only root could match inside it in a way that depends on
 * where it is. Three tables: the pattern question alone, patterns × moves on a real tree, and
 * ordinary work under the starter policy that must stay allowed.
 */
import { join } from 'node:path';
import t from 'tap';
import { starterPolicy } from '../../cli/commands/init.js';
import { compileDeny } from '../../policies/deny.js';
import { expandSlashBraces, positionDependent } from '../../policies/descendants.js';
import { nodeFs } from '../../policies/index.js';
import { contextFor, evaluate, makeTree } from '../helpers/policy.js';

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
 * Patterns × moves in one writable root `proj` (tree below). Each move is two write checks, as
 * mcp-roots-proxy asks them: `from` and `to` (missing). `safe` says whether both are allowed.
 */
interface MoveRow {
  deny: string;
  from: string;
  to: string;
  safe: boolean;
}
const TREE = [
  'proj/private/key.txt',
  'proj/pub/',
  'proj/app/vendor/lib.js',
  'proj/app/src/main.js',
  'proj/app/secret/s.txt',
  'proj/staging/mcp.json',
  'proj/notes/a.md',
  'proj/docs/',
];
const MOVES: MoveRow[] = [
  { deny: "'**/private/*.txt'", from: 'proj/private', to: 'proj/pub2', safe: false },
  { deny: "'**/private/*.txt'", from: 'proj/pub', to: 'proj/private', safe: false },
  { deny: "'**/private/*.txt'", from: 'proj/notes', to: 'proj/notes2', safe: true },
  { deny: "'**/private/*.txt'", from: 'proj', to: 'proj2', safe: false },
  { deny: "'**/.env'", from: 'proj/notes', to: 'proj/notes2', safe: true },
  { deny: "'**/.env'", from: 'proj/notes', to: 'proj/docs/notes', safe: true },
  { deny: 'DIR/proj/*/key.txt', from: 'proj/private', to: 'proj/app/private', safe: false },
  { deny: 'DIR/proj/*/key.txt', from: 'proj/app/src', to: 'proj/app/src2', safe: true },
  { deny: 'DIR/proj/app/secret', from: 'proj/app', to: 'proj/app2', safe: false },
  { deny: 'DIR/proj/app/secret', from: 'proj/notes', to: 'proj/app/secret', safe: false },
  { deny: 'DIR/proj/app/secret', from: 'proj/notes', to: 'proj/docs/n', safe: true },
  {
    deny: "{path: '**/.cfg/run.json', access: write}",
    from: 'proj/staging',
    to: 'proj/.cfg',
    safe: false,
  },
  {
    deny: "{path: '**/.cfg/run.json', access: write}",
    from: 'proj/staging',
    to: 'proj/st2',
    safe: true,
  },
  // a protected host configuration is staged and moved into place
  { deny: "'**/.nothing'", from: 'proj/staging', to: 'proj/.vscode', safe: false },
  { deny: "'**/.nothing'", from: 'proj/staging', to: 'proj/.cursor', safe: false },
  { deny: "'**/.nothing'", from: 'proj/staging', to: 'proj/.claude', safe: false },
  { deny: "'**/.nothing'", from: 'proj/staging', to: 'proj/.gemini', safe: false },
  // a read-only root nested in the writable one
  { deny: "'**/.nothing'", from: 'proj/app', to: 'proj/app2', safe: false },
  { deny: "'**/.nothing'", from: 'proj', to: 'proj-moved', safe: false },
  { deny: "'**/.nothing'", from: 'proj/app/src', to: 'proj/app/src2', safe: true },
  { deny: "'**/.nothing'", from: 'proj/app/vendor', to: 'proj/vendor2', safe: false },
  { deny: "'**/.nothing'", from: 'proj/notes', to: 'proj/app/vendor/notes', safe: false },
];

void t.test('patterns × moves', async (t) => {
  const dir = t.testdir({});
  makeTree(dir, ['home/', ...TREE]);
  for (const row of MOVES) {
    const policy = `version: 1
servers:
  s:
    roots:
      - path: DIR/proj
        readOnly: false
      - path: DIR/proj/app/vendor
        readOnly: true
    deny:
      - ${row.deny}
`.replaceAll('DIR', dir);
    const ev = await evaluate(dir, policy, contextFor(dir));
    t.same(ev.errors, [], `policy for ${row.deny}`);
    const from = await ev.resolved.check('s', join(dir, row.from), 'write');
    const to = await ev.resolved.check('s', join(dir, row.to), 'write');
    const allowed = from.allowed && to.allowed;
    t.equal(
      allowed,
      row.safe,
      `${row.deny}: ${row.from} -> ${row.to}: ${from.reason} / ${to.reason}`,
    );
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
