/**
 * Denies carried from one resolution to the next (policies/deny-memo.ts), on real directories and
 * links: a rule is taken over only when no link was on its way and no changed path is at or above
 * it; anything else is compiled again, so a link made above a deny is followed as soon as the
 * change that made it is reported, and a deny reached through a link follows the link's new
 * target on every recompute.
 */
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { DenyMemo, type RootSource } from '../../policies/deny-memo.js';
import type { DenyRule } from '../../policies/deny.js';
import { nodeFs } from '../../policies/index.js';

const EXTRA = { source: 'deny', display: 'x', inMeta: true } as const;

/** Compile `abs` as the resolution before did, change the tree, compile it as the next one. */
async function twice(
  abs: string,
  change: () => void,
  changed: string[] | undefined,
): Promise<{ first: DenyRule; second: DenyRule }> {
  const fs = nodeFs();
  const before = {};
  const m1 = new DenyMemo(undefined, undefined);
  const first = await m1.compile(fs, abs, 'write', EXTRA);
  m1.keep(before);
  change();
  const m2 = new DenyMemo(before, changed);
  const second = await m2.compile(fs, abs, 'write', EXTRA);
  return { first, second };
}

function tree(t: Test): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-roots-deny-memo-')));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'home', 'secret'), { recursive: true });
  mkdirSync(join(dir, 'other', 'secret'), { recursive: true });
  mkdirSync(join(dir, 'third', 'secret'), { recursive: true });
  mkdirSync(join(dir, 'elsewhere'));
  return dir;
}

void t.test('a change elsewhere: the rule is taken over as it was', async (t) => {
  const dir = tree(t);
  const abs = join(dir, 'home', 'secret');
  const { first, second } = await twice(abs, () => mkdirSync(join(dir, 'elsewhere', 'new')), [
    join(dir, 'elsewhere', 'new'),
  ]);
  t.equal(second, first, 'the same rule object');
  t.equal(second.literal, abs);
});

void t.test('`**/NAME` never reads the filesystem: always taken over', async (t) => {
  const { first, second } = await twice('**/.git', () => undefined, ['/']);
  t.equal(second, first);
});

/** A change at or above the rule, reported: compiled again, following what is there now. */
const ABOVE: [string, (dir: string) => { change: () => void; changed: string }][] = [
  [
    'its parent replaced by a link',
    (dir) => ({
      change: () => {
        renameSync(join(dir, 'home'), join(dir, 'home-old'));
        symlinkSync(join(dir, 'other'), join(dir, 'home'));
      },
      changed: join(dir, 'home'),
    }),
  ],
  [
    'the path itself replaced by a link',
    (dir) => ({
      change: () => {
        rmSync(join(dir, 'home', 'secret'), { recursive: true });
        symlinkSync(join(dir, 'other', 'secret'), join(dir, 'home', 'secret'));
      },
      changed: join(dir, 'home', 'secret'),
    }),
  ],
];

for (const [name, make] of ABOVE) {
  void t.test(`a change above the rule: ${name}`, async (t) => {
    const dir = tree(t);
    const { change, changed } = make(dir);
    const { first, second } = await twice(join(dir, 'home', 'secret'), change, [changed]);
    t.not(second, first, 'compiled again');
    t.equal(second.literal, join(dir, 'other', 'secret'), 'where the path leads now');
  });
}

void t.test('a rule reached through a link is compiled again every time', async (t) => {
  const dir = tree(t);
  symlinkSync(join(dir, 'other'), join(dir, 'via'));
  const abs = join(dir, 'via', 'secret');
  // The link is pointed elsewhere, and the change is not even reported.
  const { first, second } = await twice(abs, () => {
    rmSync(join(dir, 'via'));
    symlinkSync(join(dir, 'third'), join(dir, 'via'));
  }, [join(dir, 'elsewhere')]);
  t.equal(first.literal, join(dir, 'other', 'secret'));
  t.equal(second.literal, join(dir, 'third', 'secret'));
});

void t.test('a full resolution (no changed paths) compiles everything again', async (t) => {
  const dir = tree(t);
  const { first, second } = await twice(join(dir, 'home', 'secret'), () => undefined, undefined);
  t.not(second, first);
  t.same(second.literal, first.literal);
});

void t.test('a glob deny: a change at or above its base compiles it again', async (t) => {
  const dir = tree(t);
  const abs = join(dir, 'home', '*.key');
  const kept = await twice(abs, () => undefined, [join(dir, 'elsewhere')]);
  t.equal(kept.second, kept.first);
  const moved = await twice(abs, () => {
    renameSync(join(dir, 'home'), join(dir, 'home-old'));
    symlinkSync(join(dir, 'other'), join(dir, 'home'));
  }, [join(dir, 'home')]);
  t.not(moved.second, moved.first);
  t.equal(moved.second.base, join(dir, 'other'));
});

/**
 * `watchDirs` carried from one resolution to the next: the directories it names must equal what
 * a memo with nothing carried names on the same tree, after every kind of step; and a step that
 * changed nothing on a chain asks nothing of the filesystem and goes through no root again.
 */
interface Counted {
  fs: ReturnType<typeof nodeFs>;
  lstats: string[];
}

/** The real filesystem, seen through a view the engine asks (not directly), counting `lstat`s. */
function counted(): Counted {
  const inner = nodeFs();
  const lstats: string[] = [];
  return { lstats, fs: { ...inner, lstat: (p) => (lstats.push(p), inner.lstat(p)) } };
}

/**
 * One resolution's deny and roots; `changed` as the watcher reports it (undefined: full).
 * `c.lstats` ends with the `lstat`s `watchDirs` made (compiling the deny may make its own).
 */
async function resolveOnce(
  previous: object | undefined,
  changed: string[] | undefined,
  deny: string,
  sources: RootSource[],
  c: Counted,
): Promise<{ memo: DenyMemo; resolution: object; dirs: string[] }> {
  const fs = c.fs;
  const memo = new DenyMemo(previous, changed);
  await memo.compile(fs, deny, 'all', EXTRA);
  c.lstats.length = 0;
  const dirs = (await memo.watchDirs(fs, sources, [])).map((d) => d.path).sort();
  const resolution = {};
  memo.keep(resolution);
  return { memo, resolution, dirs };
}

/** A source over fixed roots, counting how often its roots are gone through. */
function source(roots: string[], seen: { n: number }, delta?: RootSource['delta']): RootSource {
  return {
    key: {},
    roots: function* () {
      seen.n++;
      yield* roots;
    },
    ...(delta ? { delta } : {}),
  };
}

void t.test('watchDirs carried: equal to a fresh look after each step', async (t) => {
  const dir = tree(t);
  mkdirSync(join(dir, 'home', 'a', 'b'), { recursive: true });
  const deny = join(dir, 'home', 'a', 'b', 'c', 'secret');
  const root = join(dir, 'home');
  const seen = { n: 0 };
  const first = source([root, join(dir, 'elsewhere')], seen);
  const c = counted();
  const r1 = await resolveOnce(undefined, undefined, deny, [first], c);
  t.same(
    r1.dirs,
    [root, join(root, 'a'), join(root, 'a', 'b')],
    'the existing directories on the way',
  );

  // A step elsewhere, the same expansion: nothing asked, no root gone through.
  seen.n = 0;
  const r2 = await resolveOnce(r1.resolution, [join(dir, 'elsewhere', 'x')], deny, [first], c);
  t.same(r2.dirs, r1.dirs);
  t.same(
    c.lstats.filter((p) => p.startsWith(root + '/') || p === root),
    [],
    'no lstat of the chain',
  );
  t.equal(seen.n, 0, 'the roots are not gone through again');

  // The missing directory on the way made, and reported: it is asked, and watched.
  mkdirSync(join(root, 'a', 'b', 'c'));
  const made = join(root, 'a', 'b', 'c');
  const r3 = await resolveOnce(r2.resolution, [made], deny, [first], c);
  const fresh3 = await resolveOnce(undefined, undefined, deny, [first], counted());
  t.same(r3.dirs, fresh3.dirs, 'as a fresh look');
  t.ok(r3.dirs.includes(made), 'the new directory is watched');
  t.ok(c.lstats.includes(made), 'the new directory was asked');
  t.notOk(c.lstats.includes(root), 'the rest of the chain was not');

  // An updated expansion: the root holding the rule removed, then added back, by a delta.
  const seen2 = { n: 0 };
  const without = source([join(dir, 'elsewhere')], seen2, {
    from: first.key,
    added: [],
    removed: [root],
  });
  const r4 = await resolveOnce(r3.resolution, [join(dir, 'elsewhere', 'y')], deny, [without], c);
  t.same(r4.dirs, [], 'no root holds the rule: nothing to watch');
  t.equal(seen2.n, 0, 'taken from the delta');
  const back = source([join(dir, 'elsewhere'), root], seen2, {
    from: without.key,
    added: [root],
    removed: [],
  });
  const r5 = await resolveOnce(r4.resolution, [join(dir, 'elsewhere', 'z')], deny, [back], c);
  t.same(r5.dirs, fresh3.dirs, 'the root back: its chain again');
  t.equal(seen2.n, 0, 'taken from the delta');

  // A directory on the way replaced by a link, reported: asked again, and no longer watched.
  renameSync(join(root, 'a', 'b'), join(root, 'a', 'b-real'));
  symlinkSync('b-real', join(root, 'a', 'b'));
  const r6 = await resolveOnce(r5.resolution, [join(root, 'a', 'b')], deny, [back], c);
  const fresh6 = await resolveOnce(undefined, undefined, deny, [back], counted());
  t.same(r6.dirs, fresh6.dirs, 'as a fresh look');
  t.notOk(r6.dirs.includes(join(root, 'a', 'b')), 'a link is not watched');

  // A full resolution asks everything again, whatever was carried.
  const r7 = await resolveOnce(r6.resolution, undefined, deny, [back], c);
  t.same(r7.dirs, fresh6.dirs);
  t.ok(c.lstats.includes(root), 'a full resolution asks again');
});

void t.test('watchDirs carried: a source seen for the first time is gone through', async (t) => {
  const dir = tree(t);
  const deny = join(dir, 'other', 'secret', 'x');
  const seen = { n: 0 };
  const r1 = await resolveOnce(
    undefined,
    undefined,
    deny,
    [source([join(dir, 'home')], seen)],
    counted(),
  );
  t.same(r1.dirs, []);
  // A new expansion with no delta (a path the policy did not name before).
  const other = source([join(dir, 'other')], seen);
  const r2 = await resolveOnce(r1.resolution, [join(dir, 'x')], deny, [other], counted());
  t.same(r2.dirs, [join(dir, 'other'), join(dir, 'other', 'secret')]);
  t.equal(seen.n, 2);
});
