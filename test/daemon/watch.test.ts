/**
 * Watching the policy's own files: each kind of save gives one notification, an invalid edit
 * keeps serving, a missing or symlinked main file, includes added and removed, and closing
 * (root directories are in watch-roots.test.ts).
 */
import {
  copyFileSync,
  mkdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { shortDir } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';
import {
  exactlyOne,
  logCount,
  logCountBeforeSentinel,
  none,
  policy,
  setup,
  until,
  uri,
  uris,
} from '../helpers/watch-session.js';

void t.test('policy edits: each kind of save gives exactly one notification', async (t) => {
  const { d, c, first } = await setup(t, ['a', 'b', 'c', 'd', 'e'], (dir) => policy([`${dir}/a`]));
  t.same(uris(first), [uri(join(d.dir, 'a'))]);
  const expect = (names: string[]) => names.map((n) => uri(join(d.dir, n)));

  let seen = await exactlyOne(c, () => {
    const tmp = join(d.dir, '.mcp-roots.yaml.tmp123');
    writeFileSync(tmp, policy([`${d.dir}/b`]));
    renameSync(tmp, d.config);
  });
  t.equal(seen.length, 1, 'rename over: one notification');
  t.same(uris(seen[0]!), expect(['b']));

  seen = await exactlyOne(c, () => writeFileSync(d.config, policy([`${d.dir}/c`])));
  t.equal(seen.length, 1, 'in-place write: one notification');
  t.same(uris(seen[0]!), expect(['c']));

  seen = await exactlyOne(c, () => {
    unlinkSync(d.config);
    writeFileSync(d.config, policy([`${d.dir}/d`]));
  });
  t.equal(seen.length, 1, 'delete and recreate: one notification');
  t.same(uris(seen[0]!), expect(['d']));

  seen = await exactlyOne(c, () => {
    const swp = join(d.dir, '.mcp-roots.yaml.swp');
    writeFileSync(swp, 'b0VIM 9.0');
    writeFileSync(join(d.dir, '4913'), '');
    unlinkSync(join(d.dir, '4913'));
    copyFileSync(d.config, `${d.config}~`);
    writeFileSync(d.config, policy([`${d.dir}/e`]));
    unlinkSync(`${d.config}~`);
    unlinkSync(swp);
  });
  t.equal(seen.length, 1, 'vim-style save: one notification');
  t.same(uris(seen[0]!), expect(['e']));

  // The swap and backup files alone reload nothing.
  const loads = logCount(d, 'policy loaded');
  const n = await none(c, async () => {
    writeFileSync(join(d.dir, '.mcp-roots.yaml.swp'), 'x');
    writeFileSync(`${d.config}~`, 'x');
    await until('the recompute for the new files', () => logCount(d, 'recomputing') > 0);
  });
  t.equal(n, 0, 'no notification for swap and backup files');
  t.equal(logCountBeforeSentinel(d, 'policy loaded'), loads, 'no reload for swap and backup files');
});

void t.test('an invalid edit keeps serving; the next valid edit applies', async (t) => {
  const { d, c } = await setup(t, ['a', 'b'], (dir) => policy([`${dir}/a`]));
  const n = await none(c, async () => {
    writeFileSync(
      d.config,
      'version: 1\nservers:\n  fs:\n    roots:\n      - path: x\n        readonly: true\n',
    );
    await until('the error in status', async () => (await c.status()).policy.errors.length > 0);
  });
  t.equal(n, 0, 'no notification for an invalid edit');
  const status = await c.status();
  t.match(status.policy.errors[0]!.message, /readonly/);
  t.same(uris(await c.listRoots('fs')), [uri(join(d.dir, 'a'))], 'the last good policy serves');

  const seen = await exactlyOne(c, () => writeFileSync(d.config, policy([`${d.dir}/b`])));
  t.equal(seen.length, 1);
  t.same(uris(seen[0]!), [uri(join(d.dir, 'b'))]);
  t.same((await c.status()).policy.errors, [], 'errors cleared');
});

void t.test(
  'a refused edit naming an include not made yet, elsewhere: making it applies',
  async (t) => {
    const { d, c } = await setup(t, ['a', 'b', 'other'], (dir) => policy([`${dir}/a`]));
    const inc = join(d.dir, 'other', 'new.yaml');
    const n = await none(c, async () => {
      writeFileSync(d.config, policy([`${d.dir}/a`], `include: ["${inc}"]\n`));
      await until('the error in status', async () => (await c.status()).policy.errors.length > 0);
    });
    t.equal(n, 0, 'refused: the include does not exist');
    t.match((await c.status()).policy.errors[0]!.message, /does not exist/);
    // Its directory was no policy file's: the refused load's reads are watched too.
    const seen = await exactlyOne(c, () => writeFileSync(inc, policy([`${d.dir}/b`])));
    t.same(uris(seen[0]!), [uri(join(d.dir, 'a')), uri(join(d.dir, 'b'))], 'loaded once made');
    t.same((await c.status()).policy.errors, [], 'errors cleared');
  },
);

void t.test('a missing main file, a symlinked main file, and deleting it', async (t) => {
  const { d, c, first } = await setup(t, ['a', 'b', 'dotfiles'], () => undefined);
  t.same(first.roots, [], 'no policy file: no roots');
  const target = join(d.dir, 'dotfiles', 'roots.yaml');
  writeFileSync(target, policy([`${d.dir}/a`]));
  let seen = await exactlyOne(c, () => symlinkSync(target, d.config));
  t.equal(seen.length, 1, 'the file appearing (as a symlink) applies');
  t.same(uris(seen[0]!), [uri(join(d.dir, 'a'))]);

  seen = await exactlyOne(c, () => writeFileSync(target, policy([`${d.dir}/b`])));
  t.equal(seen.length, 1, "an edit of the link's target applies");
  t.same(uris(seen[0]!), [uri(join(d.dir, 'b'))]);

  seen = await exactlyOne(c, () => unlinkSync(d.config));
  t.equal(seen.length, 1, 'deleting the main file is a decision');
  t.same(seen[0]!.roots, [], 'every list becomes empty');
});

void t.test('a linked policy file whose target goes and comes back is read again', async (t) => {
  // A dotfiles link (stow, chezmoi, a checkout) whose target is removed, or whose directory is
  // renamed away, and then brought back: the target's directory must still be watched.
  const { d, c, first } = await setup(t, ['a', 'b', 'x', 'y', 'dotfiles', 'incs'], () => undefined);
  t.same(first.roots, [], 'no policy file: no roots');
  const target = join(d.dir, 'dotfiles', 'roots.yaml');
  writeFileSync(target, policy([`${d.dir}/a`]));
  let seen = await exactlyOne(c, () => symlinkSync(target, d.config));
  t.same(uris(seen[0]!), [uri(join(d.dir, 'a'))]);

  seen = await exactlyOne(c, () => unlinkSync(target));
  t.same(seen[0]!.roots, [], 'the target removed: no policy, no roots');
  seen = await exactlyOne(c, () => writeFileSync(target, policy([`${d.dir}/b`])));
  t.same(uris(seen[0]!), [uri(join(d.dir, 'b'))], 'the target back: read again');
  seen = await exactlyOne(c, () => writeFileSync(target, policy([`${d.dir}/a`])));
  t.same(uris(seen[0]!), [uri(join(d.dir, 'a'))], 'and its edits are seen');

  const away = join(d.dir, 'dotfiles.old');
  seen = await exactlyOne(c, () => renameSync(join(d.dir, 'dotfiles'), away));
  t.same(seen[0]!.roots, [], "the target's directory renamed away: no roots");
  seen = await exactlyOne(c, () => renameSync(away, join(d.dir, 'dotfiles')));
  t.same(uris(seen[0]!), [uri(join(d.dir, 'a'))], 'renamed back: read again');

  // An include reached through a link: its target removed keeps the last good policy (an
  // include that does not exist is an error), and the target written again with other roots
  // replaces it, not the roots of before.
  const inc = join(d.dir, 'incs', 'i.yaml');
  writeFileSync(inc, policy([`${d.dir}/x`]));
  symlinkSync(inc, join(d.dir, 'inc.yaml'));
  seen = await exactlyOne(c, () => writeFileSync(target, 'version: 1\ninclude: [inc.yaml]\n'));
  t.same(uris(seen[0]!), [uri(join(d.dir, 'x'))]);
  unlinkSync(inc);
  await until('the missing include reported', async () =>
    (await c.status()).policy.errors.some((e) => /does not exist/.test(e.message)),
  );
  seen = await exactlyOne(c, () => writeFileSync(inc, policy([`${d.dir}/y`])));
  t.same(uris(seen[0]!), [uri(join(d.dir, 'y'))], 'the include back: its new roots served');
  t.same((await c.status()).policy.errors, [], 'and the error cleared');
});

void t.test(
  'a link in the middle of a chain, and an include directory behind a link',
  async (t) => {
    const { d, c, first } = await setup(t, ['a', 'b', 'x', 'cfg', 'incs1'], () => undefined);
    t.same(first.roots, []);
    // main -> mid -> r1: re-pointing mid is an event of mid's name only.
    const cfg = join(d.dir, 'cfg');
    writeFileSync(join(cfg, 'r1.yaml'), policy([`${d.dir}/a`]));
    writeFileSync(join(cfg, 'r2.yaml'), policy([`${d.dir}/b`]));
    symlinkSync('r1.yaml', join(cfg, 'mid.yaml'));
    let seen = await exactlyOne(c, () => symlinkSync(join(cfg, 'mid.yaml'), d.config));
    t.same(uris(seen[0]!), [uri(join(d.dir, 'a'))]);
    seen = await exactlyOne(c, () => {
      // Re-pointed atomically, as `ln -sfn` or `mv -T` do it.
      symlinkSync('r2.yaml', join(cfg, 'mid.new'));
      renameSync(join(cfg, 'mid.new'), join(cfg, 'mid.yaml'));
    });
    t.same(uris(seen[0]!), [uri(join(d.dir, 'b'))], 'the middle link re-pointed: read again');
  },
);

void t.test("an include glob's directory, a link, whose target goes and comes back", async (t) => {
  // A dotfiles layout: `~/.config -> dot`, and `mcp-roots.d -> incs1` beside the main file.
  const dir = shortDir();
  mkdirSync(join(dir, 'dot', 'incs1'), { recursive: true });
  symlinkSync('dot', join(dir, 'cfg'));
  const configFile = join(dir, 'cfg', 'mcp-roots.yaml');
  const { d, c, first } = await setup(
    t,
    ['a', 'x'],
    () => {
      writeFileSync(join(dir, 'dot', 'incs1', 'x.yaml'), policy([`${dir}/x`]));
      symlinkSync('incs1', join(dir, 'dot', 'mcp-roots.d'));
      return policy([`${dir}/a`], 'include: [mcp-roots.d/*.yaml]\n');
    },
    { dir, configFile },
  );
  const both = [uri(join(d.dir, 'a')), uri(join(d.dir, 'x'))];
  t.same(uris(first), both);
  const incs = join(dir, 'dot', 'incs1');
  // Each step once the watches are planned for the one before: a watch of the old directory,
  // still open, would see the rename back by itself.
  const idle = () => waitFor(() => d.daemon.watcher.isIdle(), 30_000, 'the watcher idle');
  let seen = await exactlyOne(c, () => renameSync(incs, `${incs}.away`));
  t.same(uris(seen[0]!), [uri(join(d.dir, 'a'))], "the link's target renamed away");
  await idle();
  seen = await exactlyOne(c, () => renameSync(`${incs}.away`, incs));
  t.same(uris(seen[0]!), both, 'renamed back: its files are included again');
  await idle();
  seen = await exactlyOne(c, () => rmSync(incs, { recursive: true }));
  t.same(uris(seen[0]!), [uri(join(d.dir, 'a'))], 'removed');
  await idle();
  seen = await exactlyOne(c, () => {
    mkdirSync(`${incs}.new`);
    writeFileSync(join(`${incs}.new`, 'x.yaml'), policy([`${d.dir}/x`]));
    renameSync(`${incs}.new`, incs);
  });
  t.same(uris(seen[0]!), both, 'made again: included again');
});

void t.test('include added or removed changes what is watched', async (t) => {
  const { d, c, first } = await setup(t, ['a', 'inc'], () => policy([]));
  t.same(first.roots, []);
  const inc = join(d.dir, 'inc', 'a.yaml');
  writeFileSync(inc, policy([`${d.dir}/a`]));
  // The state directory, made for the first decision logged, moves the grants file's watch there: counted
  // once that plan is made.
  await waitFor(() => d.daemon.watcher.isIdle(), 30_000, 'the watcher idle');
  const before = d.daemon.watcher.status().directories;

  let seen = await exactlyOne(c, () =>
    writeFileSync(d.config, policy([], `include: ["${d.dir}/inc/*.yaml"]\n`)),
  );
  t.same(uris(seen[0]!), [uri(join(d.dir, 'a'))], 'the included file applies');
  await until(
    'the include directory watched',
    () => d.daemon.watcher.status().directories > before,
  );

  seen = await exactlyOne(c, () => writeFileSync(inc, policy([])));
  t.equal(seen.length, 1, 'an edit of the included file applies');
  t.same(seen[0]!.roots, []);

  seen = await exactlyOne(c, () =>
    writeFileSync(join(d.dir, 'inc', 'b.yaml'), policy([`${d.dir}/a`])),
  );
  t.equal(seen.length, 1, 'a new file matching the include glob applies');

  seen = await exactlyOne(c, () => writeFileSync(d.config, policy([])));
  t.same(seen[0]!.roots, [], 'include removed');
  await until(
    'the include directory released',
    () => d.daemon.watcher.status().directories === before,
  );
  const loads = logCount(d, 'policy loaded');
  const n = await none(c, () => writeFileSync(inc, policy([`${d.dir}/a`])));
  t.equal(n, 0, 'an edit of a file no longer included sends nothing');
  t.equal(logCountBeforeSentinel(d, 'policy loaded'), loads, 'and reloads nothing');
});

void t.test('close() is idempotent', async (t) => {
  const { d } = await setup(t, [], () => undefined);
  const w = d.daemon.watcher;
  const p = w.close();
  t.equal(w.close(), p, 'the same promise');
  await p;
  t.equal(w.status().directories, 0, 'nothing left open');
});

void t.test("an include glob's directory, a link, re-pointed: the watch follows", async (t) => {
  const { d, c, first } = await setup(t, ['a', 'b', 'e1', 'e2'], (dir) => {
    symlinkSync(join(dir, 'e1'), join(dir, 'conf.d'));
    return policy([`${dir}/a`], 'include: ["conf.d/*.yaml"]\n');
  });
  t.same(uris(first), [uri(join(d.dir, 'a'))]);
  // Set on e1 first: a watch set after the link moved would follow it anyway.
  await until('the include directory watched', () => d.daemon.watcher.status().directories === 3);
  // Nothing matches on either side: the lists stay as they are.
  const n = await none(c, () => {
    symlinkSync(join(d.dir, 'e2'), join(d.dir, 'conf.d.new'));
    renameSync(join(d.dir, 'conf.d.new'), join(d.dir, 'conf.d'));
  });
  t.equal(n, 0, 're-pointed: no change to any list');
  const seen = await exactlyOne(c, () =>
    writeFileSync(join(d.dir, 'e2', 'x.yaml'), policy([`${d.dir}/b`])),
  );
  t.same(uris(seen[0]!), [uri(join(d.dir, 'a')), uri(join(d.dir, 'b'))], 'a file there loads');
});

void t.test(
  'a link on the way to an include glob re-pointed, in no directory watched else',
  async (t) => {
    const { d, c, first } = await setup(t, ['a', 'b', 'links', 'x/conf.d', 'y/conf.d'], (dir) => {
      symlinkSync(join(dir, 'x'), join(dir, 'links', 'l'));
      return policy([`${dir}/a`], 'include: ["links/l/conf.d/*.yaml"]\n');
    });
    t.same(uris(first), [uri(join(d.dir, 'a'))]);
    await until('the include directory watched', () => d.daemon.watcher.status().directories === 4);
    // Everything done first (the new watches' own look, a recompute and the plan after it): a
    // plan made after the link moved would follow it by itself.
    await waitFor(
      async () =>
        logCount(d, 'recomputing (') === logCount(d, 'recomputed (') &&
        (await d.daemon.watcher.isIdle()),
      30_000,
      'the daemon idle',
    );
    // Re-pointed, then a file made where it leads now, nothing else moving: the link's own event,
    // in `links`, is all there is to see.
    symlinkSync(join(d.dir, 'y'), join(d.dir, 'links', 'l.new'));
    renameSync(join(d.dir, 'links', 'l.new'), join(d.dir, 'links', 'l'));
    const seen = await exactlyOne(c, () =>
      writeFileSync(join(d.dir, 'y', 'conf.d', 'x.yaml'), policy([`${d.dir}/b`])),
    );
    t.same(uris(seen[0]!), [uri(join(d.dir, 'a')), uri(join(d.dir, 'b'))], 'a file there loads');
  },
);
