/**
 * A tree watch (daemon/watch-tree.ts) over a fresh root, for tests that change the tree and then
 * ask whether exactly the directories that stand are watched, each by a live watch.
 */
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { watchTree, type TreeHandle } from '../../daemon/watch-tree.js';
import type { WatchEvent } from '../../daemon/watch-dir.js';

/** How long a report may take on a loaded machine before a test gives up: a ceiling only. */
const CEILING_MS = 10_000;

/** Every directory at or under `dir`, not through links (what a tree watch must watch). */
export function standingDirs(dir: string): string[] {
  const out = [dir];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.isDirectory()) out.push(...standingDirs(join(dir, e.name)));
  }
  return out.sort();
}

/** Let the watcher (in this process) read and start handling what happened so far. */
export const turns = (n: number): Promise<void> =>
  Array.from({ length: n }).reduce<Promise<void>>(
    (p) => p.then(() => new Promise<void>((r) => setImmediate(r))),
    Promise.resolve(),
  );

export interface WatchedTree {
  /** The watched root (canonical) and a directory beside it, outside the tree. */
  root: string;
  outside: string;
  handle: TreeHandle;
  events: WatchEvent[];
  errors: Error[];
  /** Resolves when a creation of `path` is reported (rejects, naming it, after a ceiling). */
  created(path: string): Promise<void>;
  /**
   * Wait until the watch has acted on every change made so far: a new directory in the root is
   * reported after every event queued before it (one inotify queue, read in order), and then
   * no walk of a new subtree is under way.
   */
  quiet(): Promise<void>;
  /**
   * What a tree watch must end in: the directories it watches are exactly those that stand, and
   * a directory made in each of them is reported by its own event (a live watch of its parent).
   * Call after `quiet`. Returns what went wrong, empty when nothing did.
   */
  verify(label: string): Promise<string[]>;
}

/**
 * Open a tree watch over a new root, after `before` has laid out the root and `outside`; `impl`
 * is the tree watch (a test may pass one imported with a fault injected).
 */
export async function watchedTree(
  t: Test,
  before: (root: string, outside: string) => void = () => {},
  impl: typeof watchTree = watchTree,
): Promise<WatchedTree> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mcp-roots-tree-moves-')));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const root = join(dir, 'root');
  const outside = join(dir, 'outside');
  mkdirSync(root);
  mkdirSync(outside);
  before(root, outside);
  const events: WatchEvent[] = [];
  const errors: Error[] = [];
  const waiting = new Map<string, () => void>();
  const handle = await impl(
    root,
    (e) => {
      events.push(e);
      if (e.kind === 'create') waiting.get(e.path)?.();
    },
    (err) => errors.push(err),
    { ignore: [], onOverflow: () => errors.push(new Error('the tree overflowed its cap')) },
  );
  t.teardown(() => handle.close());
  const created = (path: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiting.delete(path);
        reject(new Error(`the creation of ${path} was not reported within ${CEILING_MS} ms`));
      }, CEILING_MS);
      waiting.set(path, () => {
        clearTimeout(timer);
        waiting.delete(path);
        resolve();
      });
    });
  let sentinels = 0;
  const quiet = async () => {
    const s = join(root, `sentinel-${++sentinels}`);
    const seen = created(s);
    mkdirSync(s);
    await seen;
    await handle.settled();
  };
  let probes = 0;
  const verify = async (label: string) => {
    const problems: string[] = [];
    const want = standingDirs(root);
    const got = handle.directories();
    const missing = want.filter((d) => !got.includes(d));
    const extra = got.filter((d) => !want.includes(d));
    if (missing.length > 0) problems.push(`${label}: not watched: ${missing.join(', ')}`);
    if (extra.length > 0) problems.push(`${label}: watched but gone: ${extra.join(', ')}`);
    const name = `probe-${++probes}`;
    const results = await Promise.allSettled(
      want.map((d) => {
        const p = join(d, name);
        const seen = created(p);
        mkdirSync(p);
        return seen;
      }),
    );
    for (const r of results) if (r.status === 'rejected') problems.push(`${label}: ${r.reason}`);
    if (errors.length > 0) problems.push(`${label}: watch errors: ${errors.join('; ')}`);
    return problems;
  };
  return { root, outside, handle, events, errors, created, quiet, verify };
}
