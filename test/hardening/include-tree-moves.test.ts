/**
 * What an include glob loads from below its base: a file written in a directory below it (only
 * the base was watched, so it was never seen), and a directory moved (or renamed) in, which
 * brings the files the glob loads at once and whole (`mv ~/team ~/.config/mcp-roots/conf.d/team`
 * under an include of `conf.d/<any>/policy.yaml`): the only event is the directory's own name,
 * which no include glob matches. The daemon must see the policy change and load the deny the
 * files hold. Each row is one glob shape and one way in, made while the daemon's watcher is idle
 * (a look it still had pending from its start would find the files by chance).
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';
import { ownedShortDir } from '../helpers/proxy.js';

interface Row {
  what: string;
  /** The include glob, under the temp directory. */
  glob: string;
  /** Files there before the start (relative), besides what is moved in. */
  before?: string[];
  /** The file that will hold the deny, relative, where it is written first. */
  staged: string;
  /** The rename that brings it under the glob: [from, to]; without one, it is written there. */
  move?: [string, string];
}

const ROWS: Row[] = [
  {
    what: 'a directory moved in under a glob segment',
    glob: 'inc/*/p.yaml',
    before: ['inc/a/p.yaml'],
    staged: 'out/stage/p.yaml',
    move: ['out/stage', 'inc/m'],
  },
  {
    what: 'a directory two deep moved in under **',
    glob: 'inc/**/*.yaml',
    before: ['inc/a.yaml'],
    staged: 'out/stage/a/b/x.yaml',
    move: ['out/stage', 'inc/t'],
  },
  {
    what: 'a dot directory the glob skips renamed to a name it matches',
    glob: 'inc/*/p.yaml',
    before: ['inc/a/p.yaml'],
    staged: 'inc/.off/p.yaml',
    move: ['inc/.off', 'inc/on'],
  },
  {
    what: 'a directory moved in under a partial segment',
    glob: 'inc/*.d/*.yaml',
    before: ['inc/a.d/a.yaml'],
    staged: 'out/stage/x.yaml',
    move: ['out/stage', 'inc/x.d'],
  },
  {
    what: 'a directory moved in two levels under the glob',
    glob: 'inc/*/*/p.yaml',
    before: ['inc/a/b/p.yaml'],
    staged: 'out/stage/b/p.yaml',
    move: ['out/stage', 'inc/a2'],
  },
  {
    what: 'a file written in a directory below a ** base',
    glob: 'inc/**/*.yaml',
    before: ['inc/a.yaml', 'inc/sub/deeper/x.txt'],
    staged: 'inc/sub/n.yaml',
  },
  {
    what: 'a file written two levels below a ** base',
    glob: 'inc/**/*.yaml',
    before: ['inc/a.yaml', 'inc/sub/deeper/x.txt'],
    staged: 'inc/sub/deeper/n.yaml',
  },
  {
    what: 'a directory moved two levels below a ** base',
    glob: 'inc/**/*.yaml',
    before: ['inc/a.yaml', 'inc/sub/deeper/x.txt'],
    staged: 'out/st/n.yaml',
    move: ['out/st', 'inc/sub/deeper/m'],
  },
  {
    what: 'a file moved into a directory below a ** base',
    glob: 'inc/**/*.yaml',
    before: ['inc/a.yaml', 'inc/sub/x.txt'],
    staged: 'out/f.yaml',
    move: ['out/f.yaml', 'inc/sub/f.yaml'],
  },
  {
    what: 'a file written in an existing directory a glob segment matches',
    glob: 'inc/*/p.yaml',
    before: ['inc/a/p.yaml', 'inc/b/x.txt'],
    staged: 'inc/b/p.yaml',
  },
];

/** Until the daemon's watcher has nothing pending (no settle window, plan or batch under way). */
async function watcherIdle(d: TestDaemon): Promise<void> {
  await waitFor(() => d.daemon.watcher.isIdle(), 30_000, 'the watcher idle');
}

for (const row of ROWS) {
  void t.test(row.what, async (t) => {
    const dir = ownedShortDir(t);
    const secret = join(dir, 'w', 'secret');
    mkdirSync(secret, { recursive: true });
    mkdirSync(join(dir, 'home'));
    const put = (rel: string, text: string) => {
      mkdirSync(dirname(join(dir, rel)), { recursive: true });
      writeFileSync(join(dir, rel), text);
    };
    for (const f of row.before ?? []) put(f, 'version: 1\n');
    const policy = [
      'version: 1',
      'include:',
      `  - "${join(dir, row.glob)}"`,
      'servers:',
      '  fs:',
      `    roots: [{path: ${join(dir, 'w')}}]`,
      '',
    ].join('\n');
    const d = await startDaemon(t, policy, { dir });
    const c = await d.connect();
    t.equal((await c.check('fs', secret)).allowed, true, 'the path is allowed before');
    // The deny is written where no glob looks, then moved under one in a single rename; or
    // written in place, once the watcher is idle.
    if (row.move) put(row.staged, `version: 1\ndeny: [${secret}]\n`);
    await watcherIdle(d);
    if (row.move) renameSync(join(dir, row.move[0]), join(dir, row.move[1]));
    else put(row.staged, `version: 1\ndeny: [${secret}]\n`);
    await waitFor(
      async () => !(await c.check('fs', secret)).allowed,
      20_000,
      `the moved deny in force: ${row.what}`,
    ).catch(() => undefined);
    t.equal((await c.check('fs', secret)).allowed, false, 'the moved-in deny holds');
    t.same((await c.status()).policy.errors, [], 'the policy loads');
  });
}
