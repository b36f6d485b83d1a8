/**
 * Races between a `**` glob's per-directory watches (daemon/watch-tree.ts) and an agent changing
 * the tree as fast as it likes: directories made and moved before their watch is set, replaced
 * by links while the walk reads them, watched directories renamed away with a link or a new
 * directory put in their place, moved out of the tree and back, made and removed in quick
 * cycles, and the hand-over to the recursive watcher past the cap while all that goes on.
 *
 * After the attacks, a new directory is made inside every directory of the tree and waited for
 * in the list: a directory left without a watch never shows its new one. Then the list and the
 * access decision for every path in the tree (links included) must be a fresh daemon's.
 */
import { lstatSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { makeBackend } from '../../daemon/watch-backend.js';
import { shortDir, startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';

/** One attack on `b` (the glob's base), with `o` a writable directory outside the tree. */
type Attack = (b: string, o: string) => void | Promise<void>;

/** Let the daemon (in this process) read and start handling what happened so far. */
const turn = (n: number) =>
  Array.from({ length: n }).reduce<Promise<void>>(
    (p) => p.then(() => new Promise<void>((r) => setImmediate(r))),
    Promise.resolve(),
  );

const ATTACKS: [string, Attack][] = [
  [
    'made deep, then moved before its watch is set',
    (b) => {
      mkdirSync(join(b, 'n1/x/y/z'), { recursive: true });
      renameSync(join(b, 'n1'), join(b, 'n1-moved'));
    },
  ],
  [
    'made deep, its middle replaced by a link out during the walk',
    (b, o) => {
      mkdirSync(join(b, 'n2/x/y/z'), { recursive: true });
      rmSync(join(b, 'n2/x'), { recursive: true });
      symlinkSync(o, join(b, 'n2/x'));
    },
  ],
  [
    'a watched directory renamed away and a link out put in its place',
    (b, o) => {
      renameSync(join(b, 'a1'), join(b, 'a1-away'));
      symlinkSync(o, join(b, 'a1'));
    },
  ],
  [
    'a watched directory renamed away and a new directory put in its place',
    (b) => {
      renameSync(join(b, 'a2'), join(b, 'a2-away'));
      mkdirSync(join(b, 'a2/fresh'), { recursive: true });
      mkdirSync(join(b, 'a2-away/later'));
    },
  ],
  [
    'a watched directory moved out of the tree and back, a directory made while out',
    async (b, o) => {
      for (let i = 0; i < 6; i++) {
        renameSync(join(b, 'a3'), join(o, 'a3'));
        mkdirSync(join(o, 'a3', `while-out-${i}`));
        await turn(i);
        renameSync(join(o, 'a3'), join(b, 'a3'));
        await turn(i);
      }
    },
  ],
  [
    'a watched directory\u2019s child replaced by a link out while it is away',
    async (b, o) => {
      for (let i = 0; i < 4; i++) {
        renameSync(join(b, 'a4'), join(b, `a4-away`));
        await turn(i);
        rmSync(join(b, 'a4-away/inner'), { recursive: true });
        symlinkSync(o, join(b, 'a4-away/inner'));
        renameSync(join(b, 'a4-away'), join(b, 'a4'));
        await turn(i);
        rmSync(join(b, 'a4/inner'));
        mkdirSync(join(b, 'a4/inner'));
      }
      rmSync(join(b, 'a4/inner'), { recursive: true });
      symlinkSync(o, join(b, 'a4/inner'));
    },
  ],
  [
    'made and removed in quick cycles, left made',
    async (b) => {
      for (let i = 0; i < 40; i++) {
        mkdirSync(join(b, 'c1/x'), { recursive: true });
        await turn(i % 3);
        rmSync(join(b, 'c1'), { recursive: true });
      }
      mkdirSync(join(b, 'c1/x/y'), { recursive: true });
    },
  ],
  [
    'made and replaced by a link out in quick cycles, left a link',
    async (b, o) => {
      for (let i = 0; i < 40; i++) {
        mkdirSync(join(b, 'c2/x'), { recursive: true });
        await turn(i % 3);
        rmSync(join(b, 'c2'), { recursive: true });
        symlinkSync(o, join(b, 'c2'));
        await turn(i % 2);
        rmSync(join(b, 'c2'));
      }
      symlinkSync(o, join(b, 'c2'));
    },
  ],
  [
    'a middle directory swapped between a link out and a directory while the walk runs',
    async (b, o) => {
      mkdirSync(join(b, 'w1/x/y/z'), { recursive: true });
      for (let i = 0; i < 30; i++) {
        await turn(i % 4);
        rmSync(join(b, 'w1/x'), { recursive: true });
        symlinkSync(o, join(b, 'w1/x'));
        await turn(i % 3);
        rmSync(join(b, 'w1/x'));
        mkdirSync(join(b, 'w1/x/y/z'), { recursive: true });
      }
      await turn(1);
      rmSync(join(b, 'w1/x'), { recursive: true });
      symlinkSync(o, join(b, 'w1/x'));
    },
  ],
  [
    'a watched directory renamed away and back over and over, made into again each time',
    async (b) => {
      for (let i = 0; i < 20; i++) {
        renameSync(join(b, 'a2-away'), join(b, 'a5'));
        mkdirSync(join(b, `a5/r${i}`));
        await turn(i % 4);
        renameSync(join(b, 'a5'), join(b, 'a2-away'));
        await turn(i % 3);
      }
    },
  ],
  [
    'a directory from outside holding a link out moved in',
    (b, o) => {
      mkdirSync(join(o, 'stage/d'), { recursive: true });
      symlinkSync(o, join(o, 'stage/d/out'));
      renameSync(join(o, 'stage'), join(b, 'staged'));
    },
  ],
];

/** Every path under `top` (links listed, not followed). */
function walk(top: string): { all: string[]; dirs: string[] } {
  const all: string[] = [top];
  const dirs: string[] = [top];
  for (const name of readdirSync(top)) {
    const p = join(top, name);
    if (lstatSync(p).isDirectory()) {
      const sub = walk(p);
      all.push(...sub.all);
      dirs.push(...sub.dirs);
    } else all.push(p);
  }
  return { all, dirs };
}

const policyOf = (base: string) =>
  `version: 1\nservers:\n  g:\n    roots:\n      - path: ${base}/**\n    deny:\n      - "**/secret"\n`;

/** Run `attacks`, then probe every directory, then compare lists and decisions with a fresh daemon. */
async function attackAndCompare(
  t: Test,
  live: TestDaemon,
  base: string,
  outside: string,
  attacks: [string, Attack][],
  checkEvery = true,
): Promise<void> {
  const c = await live.connect();
  const list = async (client: typeof c) =>
    (await client.listRoots('g')).roots.map((r) => r.uri).sort();
  for (const [i, [name, attack]] of attacks.entries()) {
    await attack(base, outside);
    mkdirSync(join(base, `done-${i}`));
    await waitFor(
      async () => (await list(c)).some((u) => u.endsWith(`/done-${i}`)),
      30_000,
      `the marker after: ${name}`,
    );
  }
  // A directory left without a watch never reports the one made in it (a denied one is never
  // listed, and the bulk of the tree past the cap is left alone).
  const probes = walk(base)
    .dirs.filter((d) => !/\/(probe|bulk|secret)(\/|$)/.test(d.slice(base.length)))
    .map((d) => join(d, 'probe'));
  for (const p of probes) mkdirSync(p);
  let missing: string[] = [];
  await waitFor(
    async () => {
      const got = new Set(await list(c));
      missing = probes.filter((p) => ![...got].some((u) => decodeURIComponent(u).endsWith(p)));
      return missing.length === 0;
    },
    15_000,
    'every probe listed',
  ).catch(() => undefined);
  t.same(missing, [], 'every directory of the tree is watched');

  const fresh = await startDaemon(t, policyOf(base));
  const f = await fresh.connect();
  const want = await list(f);
  let got: string[] = [];
  await waitFor(
    async () => JSON.stringify((got = await list(c))) === JSON.stringify(want),
    15_000,
    'the live list to equal the fresh one',
  ).catch(() => undefined);
  t.same(got, want, 'the live list is the fresh one');
  if (!checkEvery) return;
  const decisions = async (client: typeof c) => {
    const out: Record<string, string> = {};
    for (const p of [...walk(base).all, ...walk(outside).all]) {
      for (const access of ['read', 'write'] as const) {
        const r = await client.check('g', p, access);
        out[`${access} ${p}`] = r.allowed ? 'allowed' : 'refused';
      }
    }
    return out;
  };
  const wanted = await decisions(f);
  const had = await decisions(c);
  t.same(
    Object.keys(wanted).filter((k) => wanted[k] === 'refused' && had[k] === 'allowed'),
    [],
    'nothing the fresh daemon refuses is allowed',
  );
  t.same(had, wanted, 'every decision is the fresh daemon\u2019s');
}

function plant(base: string, outside: string): void {
  for (const d of ['a1/inner', 'a2/inner', 'a3/inner', 'a4/inner', 'secret/inner']) {
    mkdirSync(join(base, d), { recursive: true });
  }
  mkdirSync(join(outside, 'o1'), { recursive: true });
}

void t.test('each race leaves the live list and decisions a fresh daemon\u2019s', async (t) => {
  const dir = shortDir();
  const base = join(dir, 'y');
  const outside = join(dir, 'outside');
  plant(base, outside);
  const live = await startDaemon(t, policyOf(base), { dir });
  await attackAndCompare(t, live, base, outside, ATTACKS);
});

void t.test('past the cap, while links and directories change', async (t) => {
  const dir = shortDir();
  const base = join(dir, 'y');
  const outside = join(dir, 'outside');
  plant(base, outside);
  // Just under the cap at the start: the attacks below take the tree past it. The cap is the
  // daemon's own mechanism at a smaller size: at the default (4,096) every full look at the tree
  // costs seconds on a loaded machine, and the races are the same.
  const cap = 256;
  for (let i = 0; i < cap - 20; i++) mkdirSync(join(base, 'bulk', `d${i}`), { recursive: true });
  const live = await startDaemon(t, policyOf(base), {
    dir,
    watchBackend: makeBackend({ treeCap: cap }),
  });
  const over: [string, Attack][] = [
    [
      'past the cap with a link out made at once',
      (b, o) => {
        for (let i = 0; i < 60; i++) mkdirSync(join(b, 'grow', `g${i}`), { recursive: true });
        rmSync(join(b, 'a1'), { recursive: true });
        symlinkSync(o, join(b, 'a1'));
        mkdirSync(join(b, 'grow/g0/secret'));
      },
    ],
    ATTACKS[1]!,
    ATTACKS[3]!,
    ATTACKS[6]!,
    ATTACKS[8]!,
  ];
  await attackAndCompare(t, live, base, outside, over, false);
  const c = await live.connect();
  for (const p of [join(base, 'a1'), join(base, 'grow/g0/secret'), join(base, 'n2/x')]) {
    t.equal((await c.check('g', p)).allowed, false, `${p} is refused`);
  }
});
