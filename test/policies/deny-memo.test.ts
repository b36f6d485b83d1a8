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
import { DenyMemo } from '../../policies/deny-memo.js';
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
