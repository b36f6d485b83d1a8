/**
 * The running daemon's list after quick replacements under a glob equals what a daemon started
 * fresh on the same tree lists. The watcher follows a new directory or file by its path alone and
 * makes a full look for a link, a removal or a rename; these attacks try to make a link, or a
 * directory moved over another, arrive as something else. The recursive watcher (`**`) merges a
 * removal and a creation of one path into one "update"; the depth-limited one (`dir/*`) reports
 * each. After each attack a new directory is made and waited for, so the attack's own events
 * have been handled before the next; the lists are compared at the end.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { shortDir, startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';

/** One attack on `base` (the glob's base), with `outside` beyond every root. */
type Attack = (base: string, outside: string) => void;

const ATTACKS: [string, Attack][] = [
  [
    'an empty matched directory replaced by a link out',
    (b, o) => {
      rmSync(join(b, 'a1'), { recursive: true });
      symlinkSync(o, join(b, 'a1'));
    },
  ],
  [
    'a matched directory with content replaced by a link out',
    (b, o) => {
      rmSync(join(b, 'a2'), { recursive: true });
      symlinkSync(o, join(b, 'a2'));
    },
  ],
  [
    'a link renamed over an emptied matched directory',
    (b, o) => {
      rmSync(join(b, 'a3'), { recursive: true });
      symlinkSync(o, join(b, 'tmp-link'));
      renameSync(join(b, 'tmp-link'), join(b, 'a3'));
    },
  ],
  [
    'a matched directory renamed over another',
    (b) => {
      rmSync(join(b, 'a4'), { recursive: true });
      renameSync(join(b, 'a5'), join(b, 'a4'));
    },
  ],
  [
    'a new directory at once replaced by a link out',
    (b, o) => {
      mkdirSync(join(b, 'n1'));
      rmSync(join(b, 'n1'), { recursive: true });
      symlinkSync(o, join(b, 'n1'));
    },
  ],
  [
    'a matched directory replaced by a file',
    (b) => {
      rmSync(join(b, 'a6'), { recursive: true });
      writeFileSync(join(b, 'a6'), 'now a file');
    },
  ],
  [
    'a link out replaced by a directory',
    (b) => {
      rmSync(join(b, 'l1'));
      mkdirSync(join(b, 'l1'));
    },
  ],
  ['a new directory whose name is denied', (b) => mkdirSync(join(b, 'secret'))],
  [
    'many at once: directories made, linked, removed',
    (b, o) => {
      for (let i = 0; i < 40; i++) mkdirSync(join(b, `m${i}`));
      for (let i = 0; i < 40; i += 2) {
        rmSync(join(b, `m${i}`), { recursive: true });
        symlinkSync(o, join(b, `m${i}`));
      }
      for (let i = 1; i < 40; i += 4) rmSync(join(b, `m${i}`), { recursive: true });
    },
  ],
];

/** The tree each glob starts from: directories the attacks replace, and a link out. */
function plant(base: string, outside: string): void {
  for (const d of ['a1', 'a2/inner', 'a3', 'a4', 'a5', 'a6']) {
    mkdirSync(join(base, d), { recursive: true });
  }
  symlinkSync(outside, join(base, 'l1'));
}

for (const [glob, depth] of [
  ['**', 'recursive'],
  ['*', 'one level'],
] as const) {
  void t.test(`${glob} (${depth}): the live list equals a fresh daemon's`, async (t) => {
    const dir = shortDir();
    const base = join(dir, 'y');
    const outside = join(dir, 'outside');
    mkdirSync(join(outside, 'o1'), { recursive: true });
    plant(base, join(outside, 'o1'));
    const policy = `version: 1\nservers:\n  g:\n    roots:\n      - path: ${base}/${glob}\n    deny:\n      - "**/secret"\n`;
    const live = await startDaemon(t, policy, { dir });
    const c = await live.connect();
    t.teardown(() => c.close());
    const list = async (client: typeof c) =>
      (await client.listRoots('g')).roots.map((r) => r.uri).sort();

    for (const [i, [name, attack]] of ATTACKS.entries()) {
      attack(base, join(outside, 'o1'));
      // Events are handled in order: once this directory is listed, so was the attack seen.
      const marker = join(base, `done-${i}`);
      mkdirSync(marker);
      await waitFor(
        async () => (await list(c)).some((u) => u.endsWith(`/done-${i}`)),
        30_000,
        `the marker after: ${name}`,
      );
    }
    const fresh = await startDaemon(t, policy);
    const f = await fresh.connect();
    t.teardown(() => f.close());
    const want = await list(f);
    // A marker's recompute may end before an attack's trailing one: wait for the lists to agree.
    let got: string[] = [];
    await waitFor(
      async () => JSON.stringify((got = await list(c))) === JSON.stringify(want),
      30_000,
      'the live list to equal the fresh one',
    ).catch((err: Error) => {
      throw new Error(`${err.message}: live ${JSON.stringify(got)}, fresh ${JSON.stringify(want)}`);
    });
    t.same(got, want, 'the live list is the fresh one');
    t.notOk(
      got.some((u) => /\/(a1|a2|a3|n1|secret)$/.test(u)),
      'no link out and no denied directory is listed',
    );
  });
}
