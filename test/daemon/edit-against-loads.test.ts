/**
 * The watcher reloads when the files on disk differ from what the last load read, whoever asked
 * for that load (daemon/policy-edits.ts `reloadIfEdited`, state.ts `lastLook`). Compared
 * with its own last look instead, an edit made and undone around a `rootsctl reload` or a grant
 * left the daemon serving what no file says any more, until some other edit: a deleted file's
 * roots, an include's deny lost, a grant deleted by hand still served. Each case runs the order
 * that went wrong, by hand, where the watcher's settle window would end.
 */
import { linkSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { fingerprint } from '../../daemon/watch-policy.js';
import type { PolicyFileRead } from '../../policies/index.js';
import { editState } from '../helpers/edit-state.js';

const policy = (dir: string, roots: string[], extra = '') =>
  `version: 1\n${extra}servers:\n  fs:\n    roots:\n${roots
    .map((r) => `      - path: "${join(dir, r)}"\n`)
    .join('')}`;

const mkdirs = (dir: string, names: string[]) => {
  for (const n of names) mkdirSync(join(dir, n), { recursive: true });
};

void t.test('an edit undone around an asked-for reload is loaded back', async (t) => {
  const s = await editState(t, (dir) => (mkdirs(dir, ['a', 'b']), policy(dir, ['a'])));
  t.equal(await s.look(), false, 'the files as loaded at start');
  const a = policy(s.dir, ['a']);
  writeFileSync(s.configFile, policy(s.dir, ['a', 'b']));
  await s.state.reload({ policy: true, grants: true, repin: true }, 'rootsctl reload');
  t.same(s.roots(), [join(s.dir, 'a'), join(s.dir, 'b')], 'the reload took the edit');
  writeFileSync(s.configFile, a); // back to the bytes the watcher saw last
  t.equal(await s.look(), true, 'the watcher reloads');
  t.same(s.roots(), [join(s.dir, 'a')], 'what the file says now');
});

void t.test('a main file deleted, reloaded, then written back is loaded again', async (t) => {
  const s = await editState(t, (dir) => (mkdirs(dir, ['a']), policy(dir, ['a'])));
  await s.look();
  rmSync(s.configFile);
  await s.state.reload({ policy: true, grants: true, repin: true }, 'rootsctl reload');
  t.same(s.roots(), [], 'gone with its file');
  writeFileSync(s.configFile, policy(s.dir, ['a']));
  t.equal(await s.look(), true);
  t.same(s.roots(), [join(s.dir, 'a')]);
});

void t.test("an include's deny removed, reloaded, then put back is in force", async (t) => {
  const s = await editState(t, (dir) => {
    mkdirs(dir, ['a/secret', 'inc']);
    writeFileSync(join(dir, 'inc', 'deny.yaml'), `version: 1\ndeny:\n  - "${dir}/a/secret"\n`);
    return policy(dir, ['a'], `include: ["${dir}/inc/*.yaml"]\n`);
  });
  const secret = join(s.dir, 'a', 'secret', 'f');
  t.equal((await s.state.check('fs', secret, 'read')).allowed, false, 'denied at start');
  await s.look();
  const deny = join(s.dir, 'inc', 'deny.yaml');
  renameSync(deny, join(s.dir, 'deny.yaml.off'));
  await s.state.reload({ policy: true, grants: true, repin: true }, 'rootsctl reload');
  t.equal((await s.state.check('fs', secret, 'read')).allowed, true, 'allowed without it');
  renameSync(join(s.dir, 'deny.yaml.off'), deny);
  t.equal(await s.look(), true, 'the watcher reloads');
  t.equal((await s.state.check('fs', secret, 'read')).allowed, false, 'denied again');
});

void t.test('a grants file deleted right after a grant wrote it: the grant goes', async (t) => {
  const s = await editState(t, (dir) => (mkdirs(dir, ['a', 'b']), policy(dir, ['a'])));
  await s.look(); // no grants file yet
  // What daemon/grants.ts does for a grant: write the file, load it.
  writeFileSync(
    s.grantsFile,
    `version: 1\nservers:\n  fs:\n    roots:\n      - path: "${join(s.dir, 'b')}"\n        expires: ${new Date(Date.now() + 86400_000).toISOString()}\n`,
  );
  await s.state.reload({ grants: true }, 'grants changed');
  t.same(s.roots(), [join(s.dir, 'a'), join(s.dir, 'b')], 'granted');
  rmSync(s.grantsFile); // as the watcher last saw it: missing
  t.equal(await s.look(), true, 'the watcher reloads');
  t.same(s.roots(), [join(s.dir, 'a')], 'no grants file, no grant');
});

void t.test('a policy refused by a reload, then mended, is loaded', async (t) => {
  const s = await editState(t, (dir) => (mkdirs(dir, ['a']), policy(dir, ['a'])));
  await s.look();
  const good = policy(s.dir, ['a']);
  writeFileSync(s.configFile, 'version: 1\nservers: [oops\n');
  t.same(await s.state.reload({ policy: true }, 'rootsctl reload'), { ok: false });
  writeFileSync(s.configFile, good);
  t.equal(await s.look(), true, 'the watcher reloads');
  t.same(s.state.errors, [], 'the error is gone with its cause');
});

void t.test('a policy invalid at start and mended before the first look is loaded', async (t) => {
  const s = await editState(t, () => 'version: 1\nservers: [oops\n');
  t.not(s.state.errors.length, 0, 'invalid at start');
  mkdirs(s.dir, ['a']);
  writeFileSync(s.configFile, policy(s.dir, ['a']));
  t.equal(await s.look(), true, 'the first look reloads');
  t.same(s.state.errors, []);
  t.same(s.roots(), [join(s.dir, 'a')]);
});

void t.test(
  'an include swapped for a link out of its directory, same bytes, is dropped',
  async (t) => {
    const s = await editState(t, (dir) => {
      mkdirs(dir, ['a', 'c', 'inc', 'alt']);
      return policy(dir, ['a'], `include: ["${dir}/inc/*.yaml"]\n`);
    });
    const text = policy(s.dir, ['c']);
    writeFileSync(join(s.dir, 'inc', 'y.yaml'), text);
    t.equal(await s.look(), true);
    t.same(s.roots(), [join(s.dir, 'a'), join(s.dir, 'c')], 'the include loaded');
    writeFileSync(join(s.dir, 'alt', 't.yaml'), text);
    symlinkSync(join(s.dir, 'alt', 't.yaml'), join(s.dir, 'inc', 'link'));
    renameSync(join(s.dir, 'inc', 'link'), join(s.dir, 'inc', 'y.yaml'));
    t.equal(await s.look(), true, 'the same bytes from elsewhere are another file');
    t.same(s.roots(), [join(s.dir, 'a')], 'a link out of the include directory is not loaded');
    t.match(
      s.state.warnings.map((w) => w.message),
      [/is a link out of/],
    );
    t.equal(await s.look(), false, 'once dropped, nothing more to reload');
  },
);

void t.test('a look at files as loaded reloads nothing', async (t) => {
  const s = await editState(t, (dir) => (mkdirs(dir, ['a']), policy(dir, ['a'])));
  t.equal(await s.look(), false, 'at start');
  const bytes = policy(s.dir, ['a']);
  writeFileSync(s.configFile, bytes); // written again, the same bytes: noise
  t.equal(await s.look(), false, 'the same bytes again');
  await s.state.reload({ policy: true, grants: true, repin: true }, 'rootsctl reload');
  t.equal(await s.look(), false, 'after a reload of the same files');
});

for (const how of ['in place', 'by a rename over it'] as const) {
  void t.test(`a file included twice, edited ${how} while it loads: one version`, async (t) => {
    const s = await editState(t, (dir) => {
      mkdirs(dir, ['a', 'b', 'c']);
      writeFileSync(join(dir, 'x.yaml'), policy(dir, ['b']));
      writeFileSync(join(dir, 'y.yaml'), 'version: 1\ninclude: ["x.yaml"]\n');
      return policy(dir, ['a'], 'include: ["x.yaml", "y.yaml"]\n');
    });
    t.same(
      s.roots(),
      ['a', 'b'].map((r) => join(s.dir, r)),
    );
    t.equal(await s.look(), false, 'at start');
    // The watcher reads an edit of x (root c)...
    const x = join(s.dir, 'x.yaml');
    writeFileSync(x, policy(s.dir, ['c']));
    const loadsBefore = s.state.loads;
    const reads = new Map<string, PolicyFileRead>();
    await fingerprint(s.state.lastLook('policy').files.keys(), reads);
    // ...and x is edited again (no root) before the reload that loads what it read.
    const none = 'version: 1\n';
    if (how === 'in place') writeFileSync(x, none);
    else {
      writeFileSync(`${x}.tmp`, none);
      renameSync(`${x}.tmp`, x);
    }
    await s.state.reload({ policy: true, grants: true, fromSnapshot: true }, 'file changed', true, {
      files: reads,
      loadsBefore,
    });
    t.same(
      s.roots(),
      ['a', 'c'].map((r) => join(s.dir, r)),
      'the load saw one version of x',
    );
    t.equal(await s.look(), true, "the second edit's look reloads");
    t.same(s.roots(), [join(s.dir, 'a')], 'served as x says now');
  });
}

void t.test('an include replaced by a hard link of another include, the same bytes', async (t) => {
  // A load knows files by device and inode: b.yaml made a second name of a.yaml is a.yaml,
  // loaded once, though its name and bytes are as before.
  const s = await editState(t, (dir) => {
    mkdirs(dir, ['a']);
    writeFileSync(join(dir, 'a.yaml'), policy(dir, ['a']));
    writeFileSync(join(dir, 'b.yaml'), policy(dir, ['a']));
    return 'version: 1\ninclude: ["a.yaml", "b.yaml"]\n';
  });
  t.equal(s.state.files.length, 3, 'three files at start');
  t.equal(await s.look(), false, 'nothing to reload at start');
  linkSync(join(s.dir, 'a.yaml'), join(s.dir, 'b.tmp'));
  renameSync(join(s.dir, 'b.tmp'), join(s.dir, 'b.yaml'));
  t.equal(await s.look(), true, 'the swap reloads');
  t.same(s.state.files, [s.configFile, join(s.dir, 'a.yaml')], 'as a fresh daemon loads it');
  t.equal(await s.look(), false, 'then nothing more');
});
