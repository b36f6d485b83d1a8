/**
 * `rootsctl edit` with a scripted editor: a valid save replaces the policy atomically; an invalid
 * one re-opens the editor with the errors on top and never touches the file; giving up, a failing
 * editor and an unchanged file leave it as it was.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { rootsctl } from '../helpers/cli.js';
import { FIXTURES } from '../helpers/repo.js';

const EDITOR = join(FIXTURES, 'editor/scripted-editor.mjs');

const GOOD = 'version: 1\nservers:\n  fs:\n    roots: [{path: ~/a}]\n';
const EDITED = 'version: 1\nservers:\n  fs:\n    roots: [{path: ~/a}, {path: ~/b}]\n';
const BAD = 'version: 1\nservers:\n  fs:\n    roots: [{path: ~/a, bogus: 1}]\n';

type Step = { write?: string; append?: string; keep?: true; exit?: number };

function setup(t: Test, steps: Step[], policy: string | null = GOOD) {
  const dir = t.testdir({ home: { a: {}, b: {} }, config: {}, script: {} });
  const file = join(dir, 'config', 'mcp-roots.yaml');
  if (policy !== null) writeFileSync(file, policy, { mode: 0o640 });
  writeFileSync(join(dir, 'script', 'steps.json'), JSON.stringify(steps));
  const env = {
    HOME: join(dir, 'home'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    PATH: process.env.PATH,
    EDITOR: `${JSON.stringify(process.execPath)} ${JSON.stringify(EDITOR)} ${JSON.stringify(join(dir, 'script'))}`,
  };
  const seen = (n: number) => readFileSync(join(dir, 'script', `seen-${n}.txt`), 'utf8');
  const runs = () => Number(readFileSync(join(dir, 'script', 'runs'), 'utf8'));
  return { dir, file, env, seen, runs };
}

void t.test('a valid edit replaces the file, keeping its mode', async (t) => {
  const { file, env, seen } = setup(t, [{ write: EDITED }]);
  const r = await rootsctl(['edit'], { env });
  t.equal(r.code, 0, r.err);
  t.equal(seen(1), GOOD, 'the editor got a copy of the policy');
  t.equal(readFileSync(file, 'utf8'), EDITED);
  t.equal(statSync(file).mode & 0o777, 0o640);
  t.equal(r.out, `saved ${file} (valid); a running mcp-rootsd applies it now.\n`);
  t.same(readdirSync(join(file, '..')), ['mcp-roots.yaml'], 'no temporary file is left beside it');
});

void t.test(
  'an invalid edit re-opens the editor with the errors, then saves the fix',
  async (t) => {
    const { file, env, seen, runs } = setup(t, [{ write: BAD }, { write: EDITED }]);
    const r = await rootsctl(['edit'], { env });
    t.equal(r.code, 0, r.err);
    t.equal(runs(), 2);
    t.match(r.err, /error: .*mcp-roots\.yaml:4:25: servers\.fs\.roots\[0\]\.bogus: unknown key/);
    t.match(r.err, 'not saved: 1 error; re-opening the editor');
    const second = seen(2);
    t.match(second, /^#! rootsctl edit: NOT SAVED/);
    t.match(second, /#! rootsctl edit: error: .*:4:25: .*bogus: unknown key.* \(line 7 here\)/);
    t.match(second.split('\n')[6], /bogus/, 'line 7 of the re-opened buffer is the one named');
    t.ok(second.endsWith(BAD), 'below the errors, the edit as it was');
    t.equal(readFileSync(file, 'utf8'), EDITED, 'only the valid version reached the file');
  },
);

void t.test('every way of giving up leaves the policy as it was, exit 1', async (t) => {
  const cases: [string, Step[], RegExp][] = [
    ['quit without fixing', [{ write: BAD }, { keep: true }], /not saved; .* is unchanged/],
    ['the editor fails', [{ exit: 3 }], /exited with 3; .* is unchanged/],
    ['the editor fails after an error', [{ write: BAD }, { exit: 1 }], /exited with 1/],
    ['an empty file', [{ write: '' }], /empty; not saved/],
    [
      'still invalid',
      [{ write: BAD }, { append: '  other: {roots: 1}\n' }, { keep: true }],
      /not saved/,
    ],
  ];
  for (const [name, steps, err] of cases) {
    const { file, env } = setup(t, steps);
    const r = await rootsctl(['edit'], { env });
    t.equal(r.code, 1, name);
    t.match(r.err, err, name);
    t.equal(readFileSync(file, 'utf8'), GOOD, `${name}: the policy is unchanged`);
  }
});

void t.test('no change is exit 0 and writes nothing', async (t) => {
  const { file, env } = setup(t, [{ keep: true }]);
  const before = statSync(file).mtimeMs;
  const r = await rootsctl(['edit'], { env });
  t.same(r, { code: 0, out: `No changes; ${file} is unchanged.\n`, err: '' });
  t.equal(statSync(file).mtimeMs, before);
});

void t.test('includes resolve from the policy file, not from the copy', async (t) => {
  const { dir, file, env } = setup(t, [
    { write: 'version: 1\ninclude: [more.yaml]\nservers:\n  fs:\n    roots: [{path: ~/a}]\n' },
  ]);
  writeFileSync(
    join(dir, 'config', 'more.yaml'),
    'version: 1\nservers:\n  x:\n    roots: [{path: ~/b}]\n',
  );
  const r = await rootsctl(['edit'], { env });
  t.equal(r.code, 0, r.err);
  t.match(readFileSync(file, 'utf8'), 'include: [more.yaml]');
});

void t.test('a symlinked policy: the target is replaced, the link kept', async (t) => {
  const { dir, file, env } = setup(t, [{ write: EDITED }], null);
  mkdirSync(join(dir, 'dotfiles'));
  writeFileSync(join(dir, 'dotfiles', 'roots.yaml'), GOOD);
  symlinkSync(join(dir, 'dotfiles', 'roots.yaml'), file);
  const r = await rootsctl(['edit'], { env });
  t.equal(r.code, 0, r.err);
  t.equal(readFileSync(join(dir, 'dotfiles', 'roots.yaml'), 'utf8'), EDITED);
  t.ok(lstatSync(file).isSymbolicLink(), 'the link is still a link');
});

void t.test('no policy yet: the editor starts from the starter policy', async (t) => {
  const { file, env, seen } = setup(t, [{ keep: true }], null);
  const r = await rootsctl(['edit'], { env });
  t.match(seen(1), /^# yaml-language-server: \$schema=/);
  t.equal(r.code, 0, 'nothing was saved, as for a file closed unchanged');
  t.match(r.out, 'was not created (save the starter policy to create it)');
  t.notOk(existsSync(file));
});

void t.test('--config FILE: what the messages name is FILE', async (t) => {
  const { dir, env } = setup(t, [{ write: EDITED }]);
  const other = join(dir, 'other.yaml');
  writeFileSync(other, GOOD);
  const r = await rootsctl(['--config', other, 'edit'], { env });
  t.equal(r.code, 0, r.err);
  t.match(r.out, 'an mcp-rootsd serving it applies it now', 'not "a running mcp-rootsd"');
  const init = await rootsctl(['--config', join(dir, 'new.yaml'), 'init'], { env });
  t.match(init.out, `--config ${join(dir, 'new.yaml')} validate`, 'init names the file it wrote');
  const missing = await rootsctl(['validate', join(dir, 'nope.yaml')], { env });
  t.match(missing.err, `Create it with \`rootsctl --config ${join(dir, 'nope.yaml')} init\``);
});
