/**
 * What the sandbox does with an include pattern in a writable root (proxy/sandbox-includes.ts).
 * Real files in a temp directory.
 */
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { couldMatchBelow, includeHolds, splitInclude } from '../../proxy/sandbox-includes.js';
import { shortDir } from '../helpers/short-dir.js';

void t.test('could a match lie below a directory inside the base', (t) => {
  /** [glob after the base, the directory relative to the base, could] */
  const rows: [string, string, boolean][] = [
    ['*.yaml', 'r', false],
    ['*.yaml', 'r/deep', false],
    ['*/*.yaml', 'r', true],
    ['*/*.yaml', 'r/deep', false],
    ['r/*.yaml', 'r', true],
    ['x/*.yaml', 'r', false],
    ['**/*.yaml', 'r/deep/er', true],
    ['a/**/*.yaml', 'b', false],
    ['a/**/*.yaml', 'a/b', true],
    ['*.{yaml,yml}', 'r', false],
    ['{a,b}/*.yaml', 'b', true],
    ['{a,b}/*.yaml', 'c', false],
    ['{a/x,b}/*.yaml', 'c', true], // a group holding a slash: fail closed
    // A slash in a group behind a class or a nested group: picomatch matches `w/a/…`.
    ['{x,[w]/a}/**/*.yaml', 'w', true],
    ['{x,(w)/a}/**/*.yaml', 'w', true],
    ['[w]/{a,[c]/d}/**/*.yaml', 'w/a', true],
    ['{x,[[]/a}/**/*.yaml', 'w', true],
    ['[rs]/*.yaml', 'r', true],
    ['.hidden/*.yaml', '.hidden', true],
  ];
  for (const [glob, rel, could] of rows)
    t.equal(couldMatchBelow(glob, rel), could, `${glob} below ${rel}: ${could}`);
  t.end();
});

void t.test('an include pattern splits where the daemon splits it', (t) => {
  t.same(splitInclude('/h/.config/mcp-roots.d/*.yaml'), {
    pattern: '/h/.config/mcp-roots.d/*.yaml',
    base: '/h/.config/mcp-roots.d',
    glob: '*.yaml',
  });
  t.same(splitInclude('/h/extra.yaml'), {
    pattern: '/h/extra.yaml',
    base: '/h/extra.yaml',
    glob: '',
  });
  t.same(splitInclude('/h/a+b/x.yaml').base, '/h/a+b/x.yaml', 'no glob: the whole path');
  t.end();
});

void t.test('what a writable root with an include pattern gets', async (t) => {
  const dir = realpathSync(shortDir());
  const root = join(dir, 'home');
  mkdirSync(join(root, '.config', 'mcp-roots.d'), { recursive: true });
  writeFileSync(join(root, '.config', 'extra.yaml'), 'version: 1\n');
  const inc = join(root, '.config', 'mcp-roots.d');

  const held = await includeHolds(root, [`${inc}/*.yaml`]);
  t.same(held.readOnly, [inc], 'the existing base is read-only');
  t.ok(held.pinned.includes(join(root, '.config')), 'the directory above it is pinned');
  t.same(
    (await includeHolds(root, [join(root, '.config', 'extra.yaml')])).readOnly,
    [join(root, '.config', 'extra.yaml')],
    'a plain included file is read-only',
  );
  await t.rejects(
    includeHolds(root, [`${root}/missing.d/*.yaml`]),
    /include pattern .*missing\.d\/\*\.yaml .*writable root .*home, and its directory .*missing\.d does not exist; create it \(mkdir -p .*missing\.d\)/,
    'a missing base in the root is refused',
  );
  await t.rejects(
    includeHolds(root, [`${root}/gone.yaml`]),
    /the included file .*gone\.yaml does not exist; create .*gone\.yaml/,
    'a missing included file in the root is refused',
  );
  await t.rejects(
    includeHolds(join(root, '.config'), [`${root}/*/*.yaml`]),
    /writable root .*\.config, which lies inside .*home; make .* read-only in the policy, or narrow the include/,
    'a root inside the base where the pattern could match is refused',
  );
  t.same(
    await includeHolds(join(root, '.config'), [`${root}/*.yaml`]),
    { readOnly: [], pinned: [], held: [] },
    'a root inside the base where it cannot match needs nothing',
  );
  t.same(
    await includeHolds(join(root, 'proj'), [`${inc}/*.yaml`]),
    { readOnly: [], pinned: [], held: [] },
    'a root beside the base needs nothing',
  );
  // A base reached through a link outside the root: the layout follows it to where the files are.
  symlinkSync(inc, join(dir, 'link.d'));
  t.same((await includeHolds(root, [`${dir}/link.d/*.yaml`])).readOnly, [inc]);
  // Through a link inside the root: the server could re-point it, and a mount cannot hold a link.
  symlinkSync(inc, join(root, 'link.d'));
  await t.rejects(
    includeHolds(root, [`${root}/link.d/*.yaml`]),
    /through the link .*\/home\/link\.d in the server's writable root/,
    'a link in the root on the way to the base is refused',
  );
  // A link outside the root leading to one inside it: found as the kernel resolves it.
  symlinkSync(join(root, 'link.d'), join(dir, 'via.d'));
  await t.rejects(
    includeHolds(root, [`${dir}/via.d/*.yaml`]),
    /through the link .*\/home\/link\.d in the server's writable root/,
    'a link in the root reached through another is refused',
  );
});
