/**
 * Which file a policy load took, and from where its relative paths are taken.
 *
 * The load used to name a file by `realpath` and then read it by name: two steps an agent able to
 * swap a link (or rename a directory on the way) between them could split, so that the load read
 * file Y while recording X as loaded, and a later include of X (a deny) was skipped as "already
 * loaded", or a cycle was reported against the wrong file. Each row below makes that swap at the
 * worst moment, right before the read (the one interleaving the OS will not produce on demand:
 * the swap is made by the filesystem view the load reads through, on the real files), and the
 * deny must be in the loaded policy whatever the load read first.
 *
 * And a file reached through a link (in an include directory, or a directory link on the way)
 * used to resolve its relative paths from the link's directory, the first time it was met, and
 * the target was then skipped as already loaded: the roots depended on the order of the includes.
 * Relative paths in an included file are taken from the file's own real directory
 * (docs/policy.md rule 1): each layout gives the same roots in every order, through `rootsctl`.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, realpathSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { loadAndResolve, nodeFs, type FsView } from '../../policies/index.js';
import { rootsctl } from '../helpers/cli.js';
import { startDaemon } from '../helpers/daemon.js';
import { contextFor } from '../helpers/policy.js';
import { ownedShortDir } from '../helpers/proxy.js';

const EMPTY = 'version: 1\n';

/** A policy file that denies `<dir>/<name>`. */
function denying(dir: string, file: string, name: string): void {
  writeFileSync(file, `version: 1\ndeny: [${join(dir, name)}]\n`);
}

/** A link at `path` to `target`, replacing whatever link is there in one rename. */
function relink(target: string, path: string): void {
  symlinkSync(target, `${path}.new`);
  renameSync(`${path}.new`, path);
}

/**
 * Each row has two policy files, each with a deny of its own (`one`, `two`), both included by
 * their own names, and one name more that leads to the first until the swap, to the second (or
 * the main file) after it.
 */
interface SwapRow {
  what: string;
  /** Files and links under `dir`; returns the main file's includes. */
  setup: (dir: string) => string[];
  /** The name whose read the swap comes right before. */
  reads: string;
  /** The swap. */
  swap: (dir: string) => void;
  /** The denies that must be loaded. */
  denies: string[];
}

const SWAPS: SwapRow[] = [
  {
    what: 'an include that is a link, re-pointed from one file to the other',
    setup: (dir) => {
      denying(dir, join(dir, 'one.yaml'), 'one');
      denying(dir, join(dir, 'two.yaml'), 'two');
      symlinkSync('one.yaml', join(dir, 'inc.yaml'));
      return ['inc.yaml', 'one.yaml', 'two.yaml'];
    },
    reads: 'inc.yaml',
    swap: (dir) => relink('two.yaml', join(dir, 'inc.yaml')),
    denies: ['one', 'two'],
  },
  {
    what: 'a directory link on the way to an include, re-pointed',
    setup: (dir) => {
      for (const d of ['v1', 'v2']) mkdirSync(join(dir, d));
      denying(dir, join(dir, 'v1', 'inc.yaml'), 'one');
      denying(dir, join(dir, 'v2', 'inc.yaml'), 'two');
      symlinkSync('v1', join(dir, 'cur'));
      return ['cur/inc.yaml', 'v1/inc.yaml', 'v2/inc.yaml'];
    },
    reads: 'cur/inc.yaml',
    swap: (dir) => relink('v2', join(dir, 'cur')),
    denies: ['one', 'two'],
  },
  {
    what: 'a link an include glob matches, re-pointed to a later match',
    setup: (dir) => {
      mkdirSync(join(dir, 'd'));
      denying(dir, join(dir, 'd', 'b.yaml'), 'one');
      denying(dir, join(dir, 'd', 'c.yaml'), 'two');
      symlinkSync('b.yaml', join(dir, 'd', 'a.yaml'));
      return ['d/*.yaml'];
    },
    reads: 'd/a.yaml',
    swap: (dir) => relink('c.yaml', join(dir, 'd', 'a.yaml')),
    denies: ['one', 'two'],
  },
  {
    what: 'an include re-pointed to the main file: a cycle taken for the file it named',
    setup: (dir) => {
      denying(dir, join(dir, 'one.yaml'), 'one');
      symlinkSync('one.yaml', join(dir, 'inc.yaml'));
      return ['inc.yaml', 'one.yaml'];
    },
    reads: 'inc.yaml',
    swap: (dir) => relink('mcp-roots.yaml', join(dir, 'inc.yaml')),
    denies: ['one'],
  },
  {
    what: 'an include re-pointed from the main file to a file: a file taken for the cycle',
    setup: (dir) => {
      denying(dir, join(dir, 'one.yaml'), 'one');
      writeFileSync(join(dir, 'a.yaml'), 'version: 1\ninclude: [inc.yaml, one.yaml]\n');
      symlinkSync('mcp-roots.yaml', join(dir, 'inc.yaml'));
      return ['a.yaml'];
    },
    reads: 'inc.yaml',
    swap: (dir) => relink('one.yaml', join(dir, 'inc.yaml')),
    denies: ['one'],
  },
];

void t.test(
  'a swap right before a read cannot make the load skip a file it did not read',
  async (t) => {
    for (const row of SWAPS) {
      await t.test(row.what, async (t) => {
        const dir = realpathSync(ownedShortDir(t));
        const main = join(dir, 'mcp-roots.yaml');
        writeFileSync(main, `version: 1\ninclude: [${row.setup(dir).join(', ')}]\n`);
        const target = join(dir, row.reads);
        const inner = nodeFs();
        let swapped = false;
        const fs: FsView = {
          ...inner,
          readFile: (p) => {
            if (p === target && !swapped) {
              swapped = true;
              row.swap(dir);
            }
            return inner.readFile(p);
          },
        };
        const ev = await loadAndResolve({ configFile: main }, contextFor(dir, { fs }));
        t.ok(swapped, 'the swap was made');
        t.same(ev.errors, [], 'no errors');
        const denies = ev.sources.files.flatMap((f) => f.deny.map((d) => d.abs));
        for (const name of row.denies)
          t.ok(denies.includes(join(dir, name)), `the deny of ${name} is loaded`);
        const shas = ev.sources.files.map((f) => f.sha256);
        t.equal(new Set(shas).size, shas.length, 'no file is loaded twice');
      });
    }
  },
);

/** A layout of policy files reached through links; `order` lists its includes in one order. */
interface LinkRow {
  what: string;
  /** Files under `dir`; `includes` are the main file's includes, in any order. */
  setup: (dir: string) => { includes: string[] };
  /** Where the `fs` root must be, relative to `dir`. */
  root: string;
}

/** `included.yaml`'s content: one root, relative. */
const RELATIVE_ROOT = 'version: 1\nservers:\n  fs:\n    roots: [{path: w}]\n';

const LINKS: LinkRow[] = [
  {
    what: 'a link in an include directory to a file outside it, the file included too',
    setup: (dir) => {
      for (const d of ['mcp-roots.d', 'other', 'other/w', 'mcp-roots.d/w']) mkdirSync(join(dir, d));
      writeFileSync(join(dir, 'other', 'b.yaml'), RELATIVE_ROOT);
      symlinkSync('../other/b.yaml', join(dir, 'mcp-roots.d', 'a.yaml'));
      return { includes: ['mcp-roots.d/a.yaml', 'other/b.yaml'] };
    },
    root: 'other/w',
  },
  {
    what: 'a link to a file in a directory below, both matched by a ** glob',
    setup: (dir) => {
      for (const d of ['d', 'd/w', 'd/sub', 'd/sub/w']) mkdirSync(join(dir, d));
      writeFileSync(join(dir, 'd', 'sub', 'b.yaml'), RELATIVE_ROOT);
      symlinkSync('sub/b.yaml', join(dir, 'd', 'a.yaml'));
      return { includes: ['d/**/*.yaml', 'd/sub/b.yaml'] };
    },
    root: 'd/sub/w',
  },
  {
    what: 'a directory link on the way to an include',
    setup: (dir) => {
      for (const d of ['real', 'real/w', 'w']) mkdirSync(join(dir, d));
      writeFileSync(join(dir, 'real', 'inc.yaml'), RELATIVE_ROOT);
      symlinkSync('real', join(dir, 'cfg'));
      return { includes: ['cfg/inc.yaml', 'real/inc.yaml'] };
    },
    root: 'real/w',
  },
  {
    what: "a linked file's own include, relative",
    setup: (dir) => {
      for (const d of ['d', 'other', 'other/w', 'd/w']) mkdirSync(join(dir, d));
      writeFileSync(join(dir, 'other', 'b.yaml'), 'version: 1\ninclude: [c.yaml]\n');
      writeFileSync(join(dir, 'other', 'c.yaml'), RELATIVE_ROOT);
      writeFileSync(join(dir, 'd', 'c.yaml'), 'version: 1\n');
      symlinkSync('../other/b.yaml', join(dir, 'd', 'a.yaml'));
      return { includes: ['d/a.yaml', 'other/b.yaml'] };
    },
    root: 'other/w',
  },
  {
    what: 'a link chain: a link to a link to the file',
    setup: (dir) => {
      for (const d of ['a', 'b', 'c', 'c/w', 'a/w', 'b/w']) mkdirSync(join(dir, d));
      writeFileSync(join(dir, 'c', 'f.yaml'), RELATIVE_ROOT);
      symlinkSync('../c/f.yaml', join(dir, 'b', 'f.yaml'));
      symlinkSync('../b/f.yaml', join(dir, 'a', 'f.yaml'));
      return { includes: ['a/f.yaml', 'b/f.yaml', 'c/f.yaml'] };
    },
    root: 'c/w',
  },
];

/** Every order of `items`. */
function orders<T>(items: T[]): T[][] {
  if (items.length <= 1) return [items];
  return items.flatMap((x, i) =>
    orders([...items.slice(0, i), ...items.slice(i + 1)]).map((rest) => [x, ...rest]),
  );
}

void t.test('an included file reached through a link means the same in every order', async (t) => {
  for (const row of LINKS) {
    await t.test(row.what, async (t) => {
      const dir = realpathSync(ownedShortDir(t));
      const { includes } = row.setup(dir);
      for (const order of orders(includes)) {
        const main = join(dir, 'mcp-roots.yaml');
        writeFileSync(main, `version: 1\ninclude: [${order.join(', ')}]\n`);
        const r = await rootsctl(['--config', main, '--json', 'list', 'fs']);
        t.equal(r.code, 0, `${order.join(', ')}: listed (${r.err.trim()})`);
        const roots = (JSON.parse(r.out) as { roots: { uri: string }[] }).roots.map((x) => x.uri);
        t.same(roots, [`file://${join(dir, row.root)}`], `${order.join(', ')}: ${row.root}`);
      }
    });
  }
});

void t.test('the main file as a link keeps its own directory for relative paths', async (t) => {
  const dir = realpathSync(ownedShortDir(t));
  for (const d of ['conf', 'conf/w', 'dots', 'dots/w']) mkdirSync(join(dir, d));
  writeFileSync(join(dir, 'dots', 'mcp-roots.yaml'), RELATIVE_ROOT);
  symlinkSync('../dots/mcp-roots.yaml', join(dir, 'conf', 'mcp-roots.yaml'));
  const r = await rootsctl([
    '--config',
    join(dir, 'conf', 'mcp-roots.yaml'),
    '--json',
    'list',
    'fs',
  ]);
  const roots = (JSON.parse(r.out) as { roots: { uri: string }[] }).roots.map((x) => x.uri);
  t.same(roots, [`file://${join(dir, 'conf', 'w')}`]);
});

void t.test('a link out of an include glob is not loaded, and validate says so', async (t) => {
  const dir = realpathSync(ownedShortDir(t));
  for (const d of ['mcp-roots.d', 'other']) mkdirSync(join(dir, d));
  writeFileSync(join(dir, 'other', 'b.yaml'), EMPTY);
  symlinkSync('../other/b.yaml', join(dir, 'mcp-roots.d', 'a.yaml'));
  const main = join(dir, 'mcp-roots.yaml');
  writeFileSync(main, 'version: 1\ninclude: [mcp-roots.d/*.yaml]\n');
  const r = await rootsctl(['validate', main]);
  t.equal(r.code, 0, 'valid');
  t.match(
    r.out + r.err,
    `${main}:2:11: include: ${join(dir, 'mcp-roots.d', 'a.yaml')} is a link out of`,
    'a warning at the include names the link',
  );
});

void t.test('the daemon serves the same roots whichever include it meets first', async (t) => {
  const dir = realpathSync(ownedShortDir(t));
  const { includes } = LINKS[0]!.setup(dir);
  mkdirSync(join(dir, 'home'));
  const d = await startDaemon(t, `version: 1\ninclude: [${includes.join(', ')}]\n`, { dir });
  const c = await d.connect();
  const uris = async () => (await c.listRoots('fs')).roots.map((r) => r.uri);
  t.same(await uris(), [`file://${join(dir, 'other/w')}`], 'link first');
  d.writePolicy(`version: 1\ninclude: [${[...includes].reverse().join(', ')}]\n`);
  const reload = await c.reload();
  t.equal(reload.ok, true, 'reloaded');
  t.same(await uris(), [`file://${join(dir, 'other/w')}`], 'target first');
});

void t.test(
  'a daemon reloading while a link is swapped in a loop never loses a deny',
  async (t) => {
    const dir = realpathSync(ownedShortDir(t));
    for (const d of ['home', 'w', 'w/one', 'w/two', 'v1', 'v2', 'x']) mkdirSync(join(dir, d));
    denying(dir, join(dir, 'v1', 'inc.yaml'), 'w/one');
    denying(dir, join(dir, 'v2', 'inc.yaml'), 'w/two');
    // The link is a directory on the way, in a directory the daemon does not watch (no policy
    // file is there), so that its every swap is not also a reload of its own.
    symlinkSync('../v1', join(dir, 'x', 'cur'));
    const policy =
      `version: 1\ninclude: [x/cur/inc.yaml, v1/inc.yaml, v2/inc.yaml]\n` +
      `servers:\n  fs:\n    roots: [{path: ${dir}/w}]\n`;
    const d = await startDaemon(t, policy, { dir });
    const c = await d.connect();
    // The attacker: re-points x/cur between v1 and v2 as fast as it can.
    const swapper = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('node:fs');
       const [link, a, b] = process.argv.slice(1);
       for (let i = 0; ; i++) {
         fs.symlinkSync(i % 2 ? a : b, link + '.new');
         fs.renameSync(link + '.new', link);
       }`,
        join(dir, 'x', 'cur'),
        '../v1',
        '../v2',
      ],
      { stdio: 'ignore' },
    );
    t.teardown(() => {
      swapper.kill('SIGKILL');
    });
    for (let i = 0; i < 30; i++) {
      const reload = await c.reload();
      t.equal(reload.ok, true, `reload ${i}`);
      for (const name of ['one', 'two']) {
        const r = await c.check('fs', join(dir, 'w', name, 'x'));
        if (r.allowed) t.fail(`reload ${i}: the deny of ${name} was lost`);
      }
    }
    swapper.kill('SIGKILL');
    t.pass('every deny held through 30 reloads');
  },
);
