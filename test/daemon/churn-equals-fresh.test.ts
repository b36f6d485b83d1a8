/**
 * After moves, removals and a link renamed into a moved directory's place under a `**` glob, the
 * running daemon lists what a daemon started fresh on the same tree lists: a change it follows
 * by the changed path alone must never keep a root that is gone or now leads elsewhere.
 */
import { mkdirSync, renameSync, rmdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { shortDir, startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';

void t.test('a churned ** glob lists what a fresh daemon lists', async (t) => {
  const dir = shortDir();
  const y = join(dir, 'y');
  const outside = join(dir, 'outside');
  mkdirSync(join(y, 't', 'u', 'v'), { recursive: true });
  mkdirSync(join(y, 'r', 'k1', 'k2'), { recursive: true });
  mkdirSync(join(outside, 'o1'), { recursive: true });
  const policy = `version: 1\nservers:\n  g2:\n    roots:\n      - path: ${y}/**\n`;
  const live = await startDaemon(t, policy, { dir });
  const c = await live.connect();
  const list = async (client: typeof c) =>
    (await client.listRoots('g2')).roots.map((r) => r.uri).sort();
  /** Make a change and wait until the live list differs from before it. */
  const step = async (what: string, change: () => void) => {
    const before = JSON.stringify(await list(c));
    change();
    await waitFor(async () => JSON.stringify(await list(c)) !== before, 30_000, what);
  };

  await step('t moved to t2', () => renameSync(join(y, 't'), join(y, 't2')));
  await step('v moved out', () => renameSync(join(y, 't2', 'u', 'v'), join(outside, 'vmoved')));
  await step('r moved to r2', () => renameSync(join(y, 'r'), join(y, 'r2')));
  await step('k2 removed', () => rmdirSync(join(y, 'r2', 'k1', 'k2')));
  symlinkSync(join(outside, 'o1'), join(dir, 'tmplink'));
  renameSync(join(dir, 'tmplink'), join(y, 't2', 'u', 'v'));

  const fresh = await startDaemon(t, policy);
  const f = await fresh.connect();
  const want = await list(f);
  let got: string[] = [];
  await waitFor(
    async () => {
      got = await list(c);
      return JSON.stringify(got) === JSON.stringify(want);
    },
    30_000,
    'the live list to equal the fresh one',
  ).catch((err: Error) => {
    throw new Error(`${err.message}: live ${JSON.stringify(got)}, fresh ${JSON.stringify(want)}`);
  });
  t.same(got, want);
  t.notOk(
    got.some((u) => u.endsWith('/t2/u/v') || u.endsWith('/r2/k1/k2')),
    'neither the link in a moved directory’s place nor a removed directory is listed',
  );
});
