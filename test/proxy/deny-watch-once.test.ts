/**
 * The proxy's watch for denied paths (proxy/deny-watch.ts) reports each appearance of a denied
 * path once, and every later one again. A directory that appears is watched, then read; an entry
 * made between the two is seen by both, and each report restarts a sandboxed server, the second
 * stopping the server the first had just started. Here the entry is made exactly then: a watch
 * of our own on the parent, set after the proxy's, runs right after the proxy's has watched the
 * new directory and asked to read it. Each case counts the reports of its path once the watch
 * is quiet: no walk under way, and a later denied file in the root reported (events arrive in
 * order). Real directories, real inotify watches, in this process.
 */
import { mkdirSync, renameSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { waitFor } from '../helpers/poll.js';
import { watchedRoot } from '../helpers/deny-watch.js';

async function watched(t: Test) {
  const { r, count, quietNow } = await watchedRoot(t, [{ pattern: '**/locked', access: 'write' }]);
  /**
   * Make the new directories `rel` (one below the other, from the root down), each once the
   * proxy's watch has set its watch on the one above; run `inside` as soon as the proxy's watch
   * has set its watch on the last one and asked to read it.
   */
  const inNewDir = (rel: string, inside: (dir: string) => void) =>
    new Promise<void>((resolve, reject) => {
      const levels = rel.split('/');
      const step = (parent: string, i: number): void => {
        const dir = join(parent, levels[i]!);
        // Ours is set after the proxy's watch of `parent`, so it runs after the proxy's.
        const ours = watch(parent, (_event, name) => {
          if (name !== levels[i]) return;
          ours.close();
          try {
            if (i + 1 < levels.length) step(dir, i + 1);
            else {
              inside(dir);
              resolve();
            }
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        });
        mkdirSync(dir);
      };
      step(r, 0);
    });
  return { r, count, quietNow, inNewDir };
}

void t.test('a denied path made in a new directory is reported once', async (t) => {
  const { r, count, quietNow, inNewDir } = await watched(t);
  // [what, the new directory, the denied entry in it, make the entry]
  const cases: [string, string, string, (p: string) => void][] = [
    ['a file', 'a', '.env', (p) => writeFileSync(p, 'A')],
    ['a file deep in new folders', 'b1/b2/b3', '.env', (p) => writeFileSync(p, 'B')],
    ['a second pattern', 'c', 'key.secret', (p) => writeFileSync(p, 'C')],
    ['a path denied for writing', 'd', 'locked', (p) => writeFileSync(p, 'D')],
    ['a denied directory', 'e', '.env', (p) => mkdirSync(p)],
  ];
  for (let round = 0; round < 3; round++) {
    for (const [what, dir, name, make] of cases) {
      const p = join(r, `${round}-${dir}`, name);
      // The entry is made after the watch of the new directory is set, before it is read.
      await inNewDir(`${round}-${dir}`, () => make(p));
      await waitFor(() => count(p) > 0, 30_000, `the report of ${what}`);
      await quietNow();
      t.equal(count(p), 1, `${what} (round ${round}) is reported once`);
    }
  }
});

void t.test('a denied path renamed away and back is reported again', async (t) => {
  const { r, count, quietNow, inNewDir } = await watched(t);
  const p = join(r, 'a', '.env');
  await inNewDir('a', () => writeFileSync(p, 'A'));
  await waitFor(() => count(p) > 0, 30_000, 'the first report');
  await quietNow();
  t.equal(count(p), 1, 'reported once');
  // The same file (same inode) back at the same path: the mount laid for it is gone.
  renameSync(p, join(r, 'a', 'env.bak'));
  renameSync(join(r, 'a', 'env.bak'), p);
  await waitFor(() => count(p) > 1, 30_000, 'the report of the file moved back');
  t.pass('moved away and back: reported again');

  // Away and back while the new directory is still being read: the walk's report exempts at
  // most one event, the one its appearance queued; the two renames queue more.
  const q = join(r, 'b', '.env');
  await inNewDir('b', () => {
    writeFileSync(q, 'B');
    renameSync(q, join(r, 'b', 'env.bak'));
    renameSync(join(r, 'b', 'env.bak'), q);
  });
  await quietNow();
  t.ok(count(q) >= 2, `moved away and back as the directory is read: reported ${count(q)} times`);

  // A file removed and made again at once (its inode may well be reused): reported again.
  const before = count(p);
  const again = join(r, 'a', 'again.tmp');
  writeFileSync(again, 'new');
  renameSync(again, p);
  await waitFor(() => count(p) > before, 30_000, 'the report of the replaced file');
  t.pass('replaced: reported again');
});
