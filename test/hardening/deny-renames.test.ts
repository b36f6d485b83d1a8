/**
 * An attacker's pass over what the daemon watches so that a deny follows the tree: a denied
 * directory renamed away and made again under its name, removed and made again at once (its
 * inode number often comes back), replaced by a link and back, two denies naming one directory
 * (one through a link) whose watches are one, and a hard link to a denied file made in an allowed
 * directory. Each attack is made on the filesystem (as the person, or any program, would), then
 * the daemon recomputes incrementally (a new directory under the watched glob, waited for in the
 * list); every path's read and write decision must then be a fresh daemon's on the same tree.
 *
 * The second table makes the agent's own attempts through the proxy with the real filesystem
 * server: moves of a denied directory, of its parent and of a denied file to allowed names, a move
 * onto a denied name that was removed, and reads through a second spelling and a link.
 */
import {
  linkSync,
  lstatSync,
  mkdirSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { shortDir, startDaemon } from '../helpers/daemon.js';
import { assertSameAsFresh } from '../helpers/fresh-decisions.js';
import { waitFor } from '../helpers/poll.js';
import { startProxiedFs } from '../helpers/proxy.js';

const write = (path: string, text = 'secret') => {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
};

/** One attack on the tree under `d`. */
type Attack = (d: string) => void;

const ATTACKS: [string, Attack][] = [
  [
    'plain root: the denied directory renamed away and made again under its name',
    (d) => {
      renameSync(join(d, 'plain/a/secret'), join(d, 'plain/a/old'));
      write(join(d, 'plain/a/secret/key'), 'new secret');
    },
  ],
  [
    'plain root: the denied directory removed and made again at once',
    (d) => {
      rmSync(join(d, 'plain/a/secret'), { recursive: true });
      write(join(d, 'plain/a/secret/key'), 'new secret');
    },
  ],
  [
    'plain root: the denied directory\u2019s parent renamed away and made again',
    (d) => {
      renameSync(join(d, 'plain/a'), join(d, 'plain/was-a'));
      write(join(d, 'plain/a/secret/key'), 'new secret');
    },
  ],
  [
    'plain root: the denied directory replaced by a link to an allowed one, then made again',
    (d) => {
      renameSync(join(d, 'plain/a/secret'), join(d, 'plain/a/s2'));
      symlinkSync('s2', join(d, 'plain/a/secret'));
      unlinkSync(join(d, 'plain/a/secret'));
      write(join(d, 'plain/a/secret/key'), 'new secret');
    },
  ],
  [
    'plain root: the denied directory replaced by a link out of the roots',
    (d) => {
      renameSync(join(d, 'plain/a/secret'), join(d, 'outside/s'));
      symlinkSync(join(d, 'outside/s'), join(d, 'plain/a/secret'));
    },
  ],
  [
    'two denies on one directory: the link that made them one replaced by a directory',
    (d) => {
      unlinkSync(join(d, 'plain/alias'));
      write(join(d, 'plain/alias/secret/key'), 'second secret');
    },
  ],
  [
    'two denies on one directory: the real one renamed away, the link left to its new namesake',
    (d) => {
      renameSync(join(d, 'plain/a'), join(d, 'plain/a-old'));
      write(join(d, 'plain/a/secret/key'), 'new secret');
    },
  ],
  [
    'plain root: a link to the denied directory made in an allowed one',
    (d) => symlinkSync('../a/secret', join(d, 'plain/open/l')),
  ],
  [
    'plain root: a hard link to a denied file made in an allowed directory (decided by its name)',
    (d) => linkSync(join(d, 'plain/a/secret/key'), join(d, 'plain/open/hl')),
  ],
  [
    'tree: the denied directory renamed away and made again under its name',
    (d) => {
      renameSync(join(d, 'tree/a/secret'), join(d, 'tree/a/old'));
      write(join(d, 'tree/a/secret/key'), 'new secret');
    },
  ],
  [
    'tree: the denied directory\u2019s parent moved out and back with a new secret',
    (d) => {
      renameSync(join(d, 'tree/a'), join(d, 'outside/a'));
      write(join(d, 'outside/a/secret/key2'), 'new secret');
      renameSync(join(d, 'outside/a'), join(d, 'tree/a'));
    },
  ],
  [
    'tree: the denied directory replaced by a link to an allowed one, then made again',
    (d) => {
      renameSync(join(d, 'tree/a/secret'), join(d, 'tree/a/s2'));
      symlinkSync('s2', join(d, 'tree/a/secret'));
      unlinkSync(join(d, 'tree/a/secret'));
      write(join(d, 'tree/a/secret/key'), 'new secret');
    },
  ],
];

/** The tree every attack starts from. */
function plant(d: string): void {
  write(join(d, 'plain/a/secret/key'));
  mkdirSync(join(d, 'plain/open'));
  symlinkSync('a', join(d, 'plain/alias'));
  write(join(d, 'tree/a/secret/key'));
  mkdirSync(join(d, 'tree/b'));
  mkdirSync(join(d, 'outside'));
}

function policy(d: string): string {
  return policyOf([d]);
}

/** One server `g` over each tree in `trees`, with each tree's denies. */
function policyOf(trees: string[]): string {
  return [
    'version: 1',
    'servers:',
    '  g:',
    '    roots:',
    ...trees.flatMap((d) => [`      - path: ${d}/plain`, `      - path: ${d}/tree/**`]),
    '    deny:',
    ...trees.flatMap((d) => [
      `      - ${d}/plain/a/secret`,
      `      - ${d}/plain/alias/secret`,
      `      - ${d}/tree/a/secret`,
    ]),
    '',
  ].join('\n');
}

for (const [name, attack] of ATTACKS) {
  void t.test(name, async (t) => {
    const d = shortDir();
    const tree = join(d, 'w');
    plant(tree);
    const live = await startDaemon(t, policy(tree), { dir: d });
    const c = await live.connect();
    const listed = async (suffix: string) =>
      (await c.listRoots('g')).roots.some((r) => r.uri.endsWith(suffix));
    // Decided once before the attack, so that what is compiled is what the attack must move.
    t.equal((await c.check('g', join(tree, 'plain/a/secret/key'))).allowed, false);
    t.equal((await c.check('g', join(tree, 'plain/alias/secret/key'))).allowed, false);

    attack(tree);
    for (const marker of ['done-1', 'done-2']) {
      mkdirSync(join(tree, 'tree', marker));
      await waitFor(() => listed(`/${marker}`), 30_000, `the marker ${marker}`);
    }

    const fresh = await startDaemon(t, policy(tree), {});
    const f = await fresh.connect();
    // Every path named by a deny as written is refused, whatever stands there now.
    for (const p of ['plain/a/secret/key', 'plain/alias/secret/key', 'tree/a/secret/key']) {
      const r = await f.check('g', join(tree, p));
      t.notOk(r.allowed, `${p} is refused (${r.reason ?? ''})`);
    }
    await assertSameAsFresh(t, c, f, 'g', tree);
  });
}

/** One attempt of the agent's through the filesystem server; `before` prepares the tree. */
interface Attempt {
  name: string;
  before?: (d: string) => void;
  tool: string;
  args: (d: string) => Record<string, unknown>;
  /** What must still hold on disk after the refusal. */
  after: (d: string) => string[];
}

const exists = (p: string) => lstatSync(p, { throwIfNoEntry: false }) !== undefined;

const ATTEMPTS: Attempt[] = [
  {
    name: 'move_file of the denied directory to an allowed name',
    tool: 'move_file',
    args: (d) => ({ source: join(d, 'plain/a/secret'), destination: join(d, 'plain/open/s') }),
    after: (d) => [join(d, 'plain/a/secret/key')],
  },
  {
    name: 'move_file of the denied directory\u2019s parent',
    tool: 'move_file',
    args: (d) => ({ source: join(d, 'plain/a'), destination: join(d, 'plain/open/a') }),
    after: (d) => [join(d, 'plain/a/secret/key')],
  },
  {
    name: 'move_file of a denied file to an allowed name',
    tool: 'move_file',
    args: (d) => ({
      source: join(d, 'plain/a/secret/key'),
      destination: join(d, 'plain/open/key'),
    }),
    after: (d) => [join(d, 'plain/a/secret/key')],
  },
  {
    name: 'move_file of a directory onto the denied name, removed meanwhile',
    before: (d) => {
      rmSync(join(d, 'plain/a/secret'), { recursive: true });
      write(join(d, 'plain/open/stage/key'), 'planted');
    },
    tool: 'move_file',
    args: (d) => ({ source: join(d, 'plain/open/stage'), destination: join(d, 'plain/a/secret') }),
    after: (d) => [join(d, 'plain/open/stage/key')],
  },
  {
    name: 'read_text_file through the second deny\u2019s spelling',
    tool: 'read_text_file',
    args: (d) => ({ path: join(d, 'plain/alias/secret/key') }),
    after: () => [],
  },
  {
    name: 'read_text_file through a link to the denied directory in an allowed one',
    before: (d) => symlinkSync('../a/secret', join(d, 'plain/open/l')),
    tool: 'read_text_file',
    args: (d) => ({ path: join(d, 'plain/open/l/key') }),
    after: () => [],
  },
  {
    name: 'read_text_file of the denied directory made again under its name',
    before: (d) => {
      renameSync(join(d, 'plain/a/secret'), join(d, 'plain/a/old'));
      write(join(d, 'plain/a/secret/key'), 'secret');
    },
    tool: 'read_text_file',
    args: (d) => ({ path: join(d, 'plain/a/secret/key') }),
    after: () => [],
  },
];

void t.test('through the proxy: the agent\u2019s own moves and reads are refused', async (t) => {
  // A tree of its own for each attempt, all under one daemon and one proxied filesystem server:
  // an attempt touches only its own tree, so one start of each serves every row.
  const d = realpathSync(shortDir());
  const trees = ATTEMPTS.map((_, i) => join(d, `w${i}`));
  for (const tree of trees) plant(tree);
  const live = await startDaemon(t, policyOf(trees), { dir: d });
  const fs = await startProxiedFs(t, { server: 'g', socket: live.socket });
  await waitFor(async () => (await fs.allowed()).length > 0, 30_000, 'the first list');
  const c = await live.connect();
  for (const [i, a] of ATTEMPTS.entries()) {
    const tree = trees[i]!;
    if (a.before) {
      a.before(tree);
      const marker = join(tree, 'tree', 'done');
      mkdirSync(marker);
      await waitFor(
        async () => (await c.listRoots('g')).roots.some((r) => r.uri === `file://${marker}`),
        30_000,
        `the marker ${marker}`,
      );
    }
    const r = await fs.call(a.tool, a.args(tree));
    t.ok(r.isError, `${a.name}: refused`);
    t.notMatch(r.text, /^secret$/m, `${a.name}: no secret shown`);
    for (const p of a.after(tree)) t.ok(exists(p), `${a.name}: ${p} is where it was`);
  }
  await fs.close();
});
