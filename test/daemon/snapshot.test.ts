/**
 * Answers come from the last complete snapshot while a background recompute runs: one server
 * churning a large tree must not hold up another server's `roots/check` or `roots/list`.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { shortDir, startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';

/**
 * B's `**` root: chains of nested folders. A recompute walks them a level at a time, so it spans
 * many event-loop turns without flooding libuv's thread pool (which a check's realpath shares).
 * The depth makes the recompute long (one turn per level at least); more chains only widen each
 * level, and cost every walk, watch and the clean-up (20 chains took 10 s more CPU than 5).
 */
const CHAINS = 5;
const DEPTH = 200;
const FOLDERS = CHAINS * DEPTH;

void t.test('a roots/check and a roots/list are answered while a recompute runs', async (t) => {
  const dir = shortDir();
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  mkdirSync(a);
  for (let i = 0; i < CHAINS; i++)
    mkdirSync(join(b, `c${i}`, ...Array<string>(DEPTH - 1).fill('x')), { recursive: true });
  const td = await startDaemon(
    t,
    `version: 1\nservers:\n  a:\n    roots:\n      - path: ${a}\n  b:\n    roots:\n      - path: ${b}/**\n`,
    { dir },
  );
  t.teardown(async () => {
    await td.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const client = await td.connect();
  const before = (await client.listRoots('b')).roots.length;
  t.ok(before >= FOLDERS, `B starts with ${before} roots`);

  // Opening the watches recomputes once (to catch what changed meanwhile): let that finish.
  // A recompute asked for here waits behind every one queued before it.
  await td.daemon.state.recompute('test: settle');

  // A new folder is recomputed from its own path: B's list gains it without walking the tree.
  const partial = /recomputed \(directories changed, \d+ changed paths?\)/;
  const partialsSince = (from: number) => td.logs.slice(from).filter((l) => partial.test(l)).length;
  const logged = td.logs.length;
  mkdirSync(join(b, 'new'));
  await waitFor(() => partialsSince(logged) >= 1, 30_000, 'a recompute of the changed paths only');
  await waitFor(
    async () => (await client.listRoots('b')).roots.some((r) => r.uri.endsWith('/b/new')),
    30_000,
    'B lists the new folder',
  );
  // A new folder under a `**` root is looked at once more after the recompute that included it
  // (watcher.ts: what a recursive watch may have missed inside it). That second look must be
  // over before the race below: ending during it, it would be the recompute the race sees end.
  await waitFor(() => partialsSince(logged) >= 2, 30_000, 'the second look at the new folder');
  await td.daemon.state.recompute('test: settle again');

  // A full recompute (what a rescan does) walks all of B's tree again, in the background.
  const events = ['recompute started'];
  const resolved = new Promise<void>((resolve) =>
    td.daemon.state.once('resolved', () => {
      events.push('recompute done');
      resolve();
    }),
  );
  rmSync(join(b, 'new'), { recursive: true });
  const full = td.daemon.state.recompute('test: a full recompute', true);

  // Both asked at once, as the recompute starts: one after the other, the second waited a round
  // trip more, and a recompute that a quick machine finished sooner could end before it.
  const [check, during] = await Promise.all([
    client.check('a', join(a, 'f.txt'), 'write').then((r) => {
      events.push('check answered');
      return r;
    }),
    client.listRoots('b').then((r) => {
      events.push('list answered');
      return r.roots.map((root) => root.uri);
    }),
  ]);
  await resolved;
  await full;

  t.same(
    [events[0], [...events.slice(1, 3)].sort(), events[3]],
    ['recompute started', ['check answered', 'list answered'], 'recompute done'],
    'both answers came before the recompute ended',
  );
  t.equal(check.allowed, true, "A's check is answered correctly");
  t.equal(during.length, before + 1, "B's list is the last complete snapshot");
  t.ok(
    during.some((u) => u.endsWith('/b/new')),
    'which still has the folder removed since',
  );
  const after = (await client.listRoots('b')).roots.map((r) => r.uri);
  t.notOk(
    after.some((u) => u.endsWith('/b/new')),
    'the finished recompute replaced the snapshot whole',
  );
});
