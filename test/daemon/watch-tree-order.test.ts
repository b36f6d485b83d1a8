/**
 * Looks at one path in the tree watch (daemon/watch-tree.ts) that end out of order. A look runs
 * `lstat` and `realpath` on the thread pool, so one begun before a change can end after one
 * begun after it, and on a loaded machine it does. The OS will not do that on demand, so here
 * `lstat` answers "gone" for a chosen directory only after the tree has reported it back: the
 * look that saw it leave ends last. It must not undo what the newer look set up.
 */
import * as fsPromises from 'node:fs/promises';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import type { WatchEvent } from '../../daemon/watch-dir.js';
import { waitFor } from '../helpers/poll.js';

/**
 * A module beside this test's compiled file, by full URL, for `t.mockImport`: tap resolves a
 * relative name against the caller's source-mapped location (the .ts file in test/), where no
 * compiled module is.
 */
// eslint-disable-next-line no-restricted-syntax -- the compiled module is what is wanted here
const compiled = (rel: string): string => new URL(rel, import.meta.url).href;

void t.test(
  'a directory moved out and back keeps its watches when the older look ends last',
  async (t) => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-roots-order-')));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const root = join(dir, 'root');
    const away = join(root, 'away');
    const parked = join(dir, 'outside', 'away');
    mkdirSync(join(away, 'inner'), { recursive: true });
    mkdirSync(join(dir, 'outside'));

    const events: WatchEvent[] = [];
    let armed = false;
    let held = 0;
    let back!: () => void;
    const reportedBack = new Promise<void>((resolve) => (back = resolve));
    const lstat: typeof fsPromises.lstat = (async (path: string) => {
      try {
        return await fsPromises.lstat(path);
      } catch (err) {
        if (armed && path === away) {
          held++;
          await reportedBack;
        }
        throw err;
      }
    }) as typeof fsPromises.lstat;
    const { watchTree } = await t.mockImport<typeof import('../../daemon/watch-tree.js')>(
      compiled('../../daemon/watch-tree.js'),
      { 'node:fs/promises': { ...fsPromises, lstat } },
    );
    const handle = await watchTree(
      root,
      (e) => {
        events.push(e);
        if (armed && held > 0 && e.path === away && e.kind === 'create') back();
      },
      (err) => t.fail(`watch error: ${err.message}`),
      { ignore: [], onOverflow: () => t.fail('no overflow here') },
    );
    t.teardown(() => handle.close());

    armed = true;
    renameSync(away, parked);
    await waitFor(() => held > 0, 30_000, 'a look to see the directory gone');
    renameSync(parked, away);
    await reportedBack;
    // The held looks end in the microtasks that follow (their other calls are done): a turn of
    // the event loop later they have acted. Whatever is made inside must still be reported.
    await new Promise<void>((resolve) => setImmediate(resolve));
    t.ok(held > 0, `${held} looks ended after the newer one`);
    const probes = [join(away, 'probe'), join(away, 'inner', 'probe')];
    for (const p of probes) mkdirSync(p);
    let missing = probes;
    await waitFor(
      () => (missing = probes.filter((p) => !events.some((e) => e.path === p))).length === 0,
      10_000,
      'both probes reported',
    ).catch(() => undefined);
    t.same(missing, [], 'the directory moved back is still watched, and so is its subtree');
  },
);
