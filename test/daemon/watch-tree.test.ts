/**
 * The per-directory tree watch behind `**` globs (daemon/watch-tree.ts), on real directories
 * with real inotify watches: what `mkdir -p` makes is watched before it is reported, symlinks are
 * never watched through (present at the start, made later, or put where a watched directory
 * was), heavy directories are not entered, and past its cap the tree hands over.
 */
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { TreeTooLarge, watchTree, type TreeHandle } from '../../daemon/watch-tree.js';
import type { WatchEvent } from '../../daemon/watch-dir.js';
import { waitFor } from '../helpers/poll.js';

interface Session {
  root: string;
  outside: string;
  events: WatchEvent[];
  handle: TreeHandle;
  /** Wait for an event on `path` (of `kind`, if given). */
  saw(path: string, kind?: WatchEvent['kind']): Promise<number>;
}

async function open(
  t: Test,
  before: (root: string, outside: string) => void = () => {},
  opts: { ignore?: string[]; cap?: number; onOverflow?: () => void } = {},
): Promise<Session> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-roots-tree-')));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const root = join(dir, 'root');
  const outside = join(dir, 'outside');
  mkdirSync(root);
  mkdirSync(join(outside, 'sub'), { recursive: true });
  before(root, outside);
  const events: WatchEvent[] = [];
  const handle = await watchTree(
    root,
    (e) => events.push(e),
    (err) => t.fail(`watch error: ${err.message}`),
    { ignore: opts.ignore ?? [], cap: opts.cap, onOverflow: opts.onOverflow ?? (() => {}) },
  );
  t.teardown(() => handle.close());
  return {
    root,
    outside,
    events,
    handle,
    saw: (path, kind) =>
      waitFor(
        () => events.some((e) => e.path === path && (kind === undefined || e.kind === kind)),
        30_000,
        `an event for ${path}`,
      ),
  };
}

void t.test('mkdir -p: the whole new subtree is watched when its top is reported', async (t) => {
  const s = await open(t);
  const top = join(s.root, 'a');
  const deep = join(top, 'b', 'c');
  mkdirSync(deep, { recursive: true });
  await s.saw(top, 'create');
  // The report comes after the walk that set the watches, never before.
  const first = s.events.findIndex((e) => e.path === top && e.kind === 'create');
  t.ok(first >= 0);
  t.ok(s.handle.directories().includes(deep), 'the deepest new directory is watched');
  // Its own watch reports what is made in it next.
  mkdirSync(join(deep, 'd'));
  await s.saw(join(deep, 'd'), 'create');
  t.ok(s.handle.directories().includes(join(deep, 'd')));
});

void t.test('a removed subtree is reported and no longer watched', async (t) => {
  const s = await open(t, (root) => mkdirSync(join(root, 'a', 'b'), { recursive: true }));
  t.same(s.handle.directories(), [s.root, join(s.root, 'a'), join(s.root, 'a', 'b')]);
  rmSync(join(s.root, 'a'), { recursive: true });
  await s.saw(join(s.root, 'a'), 'delete');
  await waitFor(() => s.handle.directories().length === 1, 30_000, 'the subtree forgotten');
  t.same(s.handle.directories(), [s.root]);
});

const LINKS: [string, (s: Session, t: Test) => Promise<string>][] = [
  [
    'a link present at the start',
    (s) => Promise.resolve(join(s.root, 'early')), // made in `before`, below
  ],
  [
    'a link made later',
    async (s) => {
      const link = join(s.root, 'late');
      symlinkSync(s.outside, link);
      await s.saw(link, 'create');
      return link;
    },
  ],
  [
    'a watched directory replaced by a link',
    async (s, t) => {
      const d = join(s.root, 'was-dir');
      mkdirSync(d);
      await s.saw(d, 'create');
      t.ok(s.handle.directories().includes(d));
      rmSync(d, { recursive: true });
      symlinkSync(s.outside, d);
      await waitFor(
        () => s.events.some((e) => e.path === d && e.kind === 'create' && e.link === true),
        30_000,
        'the link reported',
      );
      return d;
    },
  ],
];

for (const [name, make] of LINKS) {
  void t.test(`symlinks are not followed: ${name}`, async (t) => {
    const s = await open(t, (root, outside) => symlinkSync(outside, join(root, 'early')));
    const link = await make(s, t);
    const inside = (p: string) => p === link || p.startsWith(`${link}/`);
    t.notOk(s.handle.directories().some(inside), 'nothing through the link is watched');
    // What happens behind the link is not reported; two later events of our own show that
    // everything before them has been delivered.
    mkdirSync(join(s.outside, 'sub', 'new'));
    for (const mark of ['mark1', 'mark2']) {
      mkdirSync(join(s.root, mark));
      await s.saw(join(s.root, mark), 'create');
    }
    t.notOk(
      s.events.some((e) => inside(e.path) && e.path !== link),
      'no event from behind the link',
    );
    t.notOk(s.handle.directories().some(inside));
  });
}

void t.test('ignored names are not entered', async (t) => {
  const s = await open(
    t,
    (root) => mkdirSync(join(root, 'node_modules', 'x'), { recursive: true }),
    {
      ignore: ['node_modules'],
    },
  );
  t.same(s.handle.directories(), [s.root]);
  mkdirSync(join(s.root, 'p', 'node_modules', 'y'), { recursive: true });
  await s.saw(join(s.root, 'p'), 'create');
  t.same(s.handle.directories(), [s.root, join(s.root, 'p')]);
});

void t.test('past the cap: refused at the start, handed over when it grows', async (t) => {
  const refused = await open(
    t,
    (root) => mkdirSync(join(root, 'a', 'b', 'c'), { recursive: true }),
    {
      cap: 3,
    },
  ).then(
    () => undefined,
    (err: unknown) => err,
  );
  t.ok(refused instanceof TreeTooLarge, 'four directories, a cap of three: refused');
  let overflowed = false;
  const s = await open(t, (root) => mkdirSync(join(root, 'a')), {
    cap: 3,
    onOverflow: () => (overflowed = true),
  });
  t.equal(s.handle.directories().length, 2);
  mkdirSync(join(s.root, 'b', 'c'), { recursive: true });
  await waitFor(() => overflowed, 30_000, 'the overflow');
  t.same(s.handle.directories(), [], 'every watch of its own closed');
});
