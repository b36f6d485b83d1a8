/**
 * A glob below its base (`base/keep*\/src/*`) is watched to its depth only in the directories it
 * could enter. The depth-limited watch took every directory of the base to that depth: a policy
 * naming `/tmp/proj*\/src/*` watched all of `/tmp` three levels down, and a policy fuzz seed that
 * wrote such a path took more than 100,000 inotify watches, the user's whole allowance, until
 * every other watch on the machine failed with ENOSPC. Counted here as the kernel counts them
 * (`/proc/self/fdinfo`), with the daemon in this process.
 */
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  writeFileSync,
} from 'node:fs';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import t, { type Test } from 'tap';
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

  // Matches leave as they go: removed, or moved out under a name the glob does not enter.
  rmdirSync(join(base, 'keep1/src/x'));
  await waitFor(async () => !(await names()).includes('x'), 30_000, 'a removed match leaves');
  renameSync(join(base, 'keep2'), join(base, 'gone2'));
  await waitFor(async () => !(await names()).includes('z'), 30_000, 'a match moved out leaves');
  // A directory the glob did not enter, moved in under a name it does, is entered and matched.
  mkdirSync(join(base, 'other0/src/w'), { recursive: true });
  renameSync(join(base, 'other0'), join(base, 'keep3'));
  await waitFor(async () => (await names()).includes('w'), 30_000, 'a directory moved in');
  // And back out again.
  renameSync(join(base, 'keep3'), join(base, 'other0'));
  await waitFor(async () => !(await names()).includes('w'), 30_000, 'moved back out');
  // A chain made at once, faster than the watches that follow it.
  mkdirSync(join(base, 'keep4/src/v'), { recursive: true });
  await waitFor(async () => (await names()).includes('v'), 30_000, 'a chain made at once');
  // A match replaced by a file of the same name is no longer a root.
  rmdirSync(join(base, 'keep1/src/y'));
  writeFileSync(join(base, 'keep1/src/y'), '');
  await waitFor(async () => !(await names()).includes('y'), 30_000, 'a match replaced by a file');
  t.same(await names(), ['v']);
});

/**
 * A daemon on `base/keep*\/src/*` over `keep1/src/x` and an `other/src` the glob does not enter,
 * and the names of its roots.
 */
async function keepAndOther(t: Test) {
  const dir = ownedShortDir(t);
  const base = join(dir, 'base');
  mkdirSync(join(base, 'keep1/src/x'), { recursive: true });
  mkdirSync(join(base, 'other/src'), { recursive: true });
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${base}/keep*/src/*\n`,
    { dir },
  );
  const c = await d.connect();
  const names = async () => (await c.listRoots('fs')).roots.map((r) => r.name).sort();
  t.same(await names(), ['x']);
  return { dir, base, names };
}

void t.test('a directory swapped in under a watched name is watched', async (t) => {
  // A watch follows its directory by its inode: renamed away and replaced by one never entered
  // (a swap faster than a re-read), the name was watched through the old inode and the newcomer
  // not at all, so matches made in it later never appeared.
  const { base, names } = await keepAndOther(t);
  for (let round = 1; round <= 5; round++) {
    // The swap, three renames back to back; then a match made in the newcomer.
    renameSync(join(base, 'keep1'), join(base, 'tmp'));
    renameSync(join(base, 'other'), join(base, 'keep1'));
    renameSync(join(base, 'tmp'), join(base, 'other'));
    await new Promise((r) => setTimeout(r, 50));
    mkdirSync(join(base, `keep1/src/n${round}`));
    await waitFor(
      async () => (await names()).includes(`n${round}`),
      10_000,
      `round ${round}: a match made in the directory swapped in`,
    );
  }
  t.pass('every match appeared');
});

void t.test('a base replaced at once, or a storm of swaps, loses no match', async (t) => {
  // The base itself moved away and a new one made in its place before the daemon looked: the
  // watch stayed on the old directory, and matches made in the new one were never seen.
  const { dir, base, names } = await keepAndOther(t);
  renameSync(base, join(dir, 'base-old'));
  mkdirSync(join(base, 'keep9/src/z'), { recursive: true });
  await waitFor(async () => (await names()).join() === 'z', 10_000, 'the new base read');
  mkdirSync(join(base, 'keep1/src/q'), { recursive: true });
  await waitFor(async () => (await names()).includes('q'), 10_000, 'a match in the new base');

  // A storm of swaps from another process: the daemon keeps answering, and after it the watch
  // is where it should be.
  mkdirSync(join(base, 'other/src'), { recursive: true });
  const storm = spawn(process.execPath, [
    '-e',
    `const { renameSync } = require('node:fs');
     const b = ${JSON.stringify(base)};
     const end = Date.now() + 2000;
     while (Date.now() < end) {
       renameSync(b + '/keep1', b + '/tmp');
       renameSync(b + '/other', b + '/keep1');
       renameSync(b + '/tmp', b + '/other');
     }`,
  ]);
  const stormEnded = new Promise((r) => storm.on('exit', r));
  let answered = 0;
  while (storm.exitCode === null) {
    await names();
    answered++;
  }
  await stormEnded;
  t.ok(answered > 0, `answered ${answered} lists during the storm`);
  mkdirSync(join(base, 'keep1/src/after'), { recursive: true });
  await waitFor(async () => (await names()).includes('after'), 10_000, 'a match after the storm');
});
