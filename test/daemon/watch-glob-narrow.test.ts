/**
 * A glob below its base (`base/keep*\/src/*`) is watched to its depth only in the directories it
 * could enter. The depth-limited watch took every directory of the base to that depth: a policy
 * naming `/tmp/proj*\/src/*` watched all of `/tmp` three levels down, and a policy fuzz seed that
 * wrote such a path took more than 100,000 inotify watches, the user's whole allowance, until
 * every other watch on the machine failed with ENOSPC. Counted here as the kernel counts them
 * (`/proc/self/fdinfo`), with the daemon in this process.
 */
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';
import { ownedShortDir } from '../helpers/proxy.js';

const UNRELATED = 300;

/** The inotify watches this process holds. */
function inotifyWatches(): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fdinfo')) {
    try {
      n += readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8')
        .split('\n')
        .filter((l) => l.startsWith('inotify wd:')).length;
    } catch {
      // closed meanwhile
    }
  }
  return n;
}

void t.test('a glob below its base watches only what it could enter', async (t) => {
  const dir = ownedShortDir(t);
  const base = join(dir, 'base');
  mkdirSync(join(base, 'keep1/src/x'), { recursive: true });
  for (let i = 0; i < UNRELATED; i++) mkdirSync(join(base, `other${i}/a`), { recursive: true });
  const before = inotifyWatches();
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${base}/keep*/src/*\n`,
    { dir },
  );
  const c = await d.connect();
  const names = async () => (await c.listRoots('fs')).roots.map((r) => r.name).sort();
  t.same(await names(), ['x'], 'the glob matches');
  const held = inotifyWatches() - before;
  t.ok(
    held < 40,
    `${held} inotify watches for the daemon, not one per directory of ${UNRELATED * 2} unrelated ones`,
  );

  // What the glob could enter is still watched: a new match appears, in a new directory too.
  mkdirSync(join(base, 'keep1/src/y'));
  await waitFor(async () => (await names()).includes('y'), 30_000, 'a new match');
  mkdirSync(join(base, 'keep2/src/z'), { recursive: true });
  await waitFor(async () => (await names()).includes('z'), 30_000, 'a match in a new directory');
  t.same(await names(), ['x', 'y', 'z']);
});
