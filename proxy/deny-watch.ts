/**
 * Watching a sandboxed server's roots for denied paths that appear after it started. The sandbox
 * hides a denied path by a mount laid over it at start, so a path created later (or renamed into
 * a denied name, or replaced by an editor's save, which detaches the old mount in the sandbox) is
 * visible to the server until it is started again. This reports each such path at once, straight
 * from the kernel's event (no settling, no stat before the report), so that the supervisor can
 * stop the server before it reads much.
 *
 * One `fs.watch` per directory of the roots' trees (inotify), not descending into what is denied:
 * a hidden directory is an empty tmpfs in the sandbox, so nothing created inside it is visible.
 */
import { lstatSync, watch, type FSWatcher } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DenyAccess, Root } from '../common/types.js';
import type { ProxyLogger } from './log.js';
import { denyTest, entriesOf, inside } from './sandbox-mounts.js';

/** A denied path that exists now and did not (as this file) when the server started. */
export interface DeniedPath {
  path: string;
  /** `all`: hidden (unreadable); `write`: read-only. */
  access: DenyAccess;
}

export interface DenyWatchOptions {
  onDenied(denied: DeniedPath): void;
  log: ProxyLogger;
  /** The most directories watched at once (each is an inotify watch); default 50,000. */
  maxDirs?: number;
}

interface WatchedRoot {
  path: string;
  denies: { test: (p: string) => boolean; access: DenyAccess }[];
}

/** One generation of watches: live until the next is complete, so that no event falls between. */
interface WatchSet {
  watchers: Map<string, FSWatcher>;
  live: boolean;
}

const closeSet = (set: WatchSet | undefined): void => {
  if (set === undefined) return;
  set.live = false;
  for (const w of set.watchers.values()) w.close();
  set.watchers.clear();
};

export class DenyWatch {
  private current: WatchSet | undefined;
  private next: WatchSet | undefined;
  private key = '';
  private warned = false;

  constructor(private readonly o: DenyWatchOptions) {}

  /**
   * Watch these roots for their denies (`_meta['mcp-roots/deny']`); resolves once every directory
   * is watched. The same roots and denies as before keep the watches they have; new ones are
   * complete before the old ones close.
   */
  async update(roots: readonly Root[]): Promise<void> {
    const key = JSON.stringify(roots.map((r) => [r.uri, r._meta['mcp-roots/deny'] ?? []]));
    if (key === this.key) return;
    this.key = key;
    closeSet(this.next);
    const set: WatchSet = { watchers: new Map(), live: true };
    this.next = set;
    for (const r of roots) {
      const denies = (r._meta['mcp-roots/deny'] ?? []).map((d) => ({
        test: denyTest(d),
        access: d.access,
      }));
      if (denies.length === 0) continue;
      const root: WatchedRoot = { path: fileURLToPath(r.uri), denies };
      await this.watchTree(set, root, root.path, false);
    }
    if (this.next !== set) return;
    this.next = undefined;
    closeSet(this.current);
    this.current = set;
  }

  /** Stop watching everything. */
  close(): void {
    this.key = '';
    closeSet(this.next);
    closeSet(this.current);
    this.next = this.current = undefined;
  }

  /** The strongest deny of `root` naming `path`, if any. */
  private denial(root: WatchedRoot, path: string): DeniedPath | undefined {
    if (path === root.path || !inside(path, root.path)) return undefined;
    let found: DeniedPath | undefined;
    for (const d of root.denies) {
      if (!d.test(path)) continue;
      if (d.access === 'all') return { path, access: 'all' };
      found = { path, access: 'write' };
    }
    return found;
  }

  /**
   * Watch `dir` and the directories below it that are not denied. With `report`, denied entries
   * found on the way are reported: a directory that appears whole (moved in) may carry them.
   */
  private async watchTree(
    set: WatchSet,
    root: WatchedRoot,
    dir: string,
    report: boolean,
  ): Promise<void> {
    if (!set.live || set.watchers.has(dir)) return;
    if (set.watchers.size >= (this.o.maxDirs ?? 50_000))
      return this.cannotWatch(dir, 'too many directories');
    let w: FSWatcher;
    try {
      w = watch(dir, { persistent: false }, (event, name) => {
        if (event === 'rename' && name !== null) this.onEntry(set, root, join(dir, String(name)));
      });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A directory that went away meanwhile needs no watch; anything else is a blind spot.
      if (code !== 'ENOENT' && code !== 'ENOTDIR') this.cannotWatch(dir, (err as Error).message);
      return;
    }
    w.on('error', () => unwatchBelow(set, dir));
    set.watchers.set(dir, w);
    for (const e of await entriesOf(dir)) {
      const p = join(dir, e.name);
      const denied = e.isSymbolicLink() ? undefined : this.denial(root, p);
      if (denied !== undefined) {
        if (report) this.o.onDenied(denied);
        continue;
      }
      if (e.isDirectory()) await this.watchTree(set, root, p, report);
    }
  }

  /** An entry of a watched directory appeared, went away, or was renamed (either end). */
  private onEntry(set: WatchSet, root: WatchedRoot, path: string): void {
    if (!set.live) return;
    // A synchronous lstat: the report must not wait behind anything else the proxy does.
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (st === undefined) return unwatchBelow(set, path);
    // A link is not mounted over (sandbox-mounts.ts): its target is shown or hidden on its own.
    if (st.isSymbolicLink()) return;
    const denied = this.denial(root, path);
    if (denied !== undefined) return this.o.onDenied(denied);
    if (st.isDirectory()) void this.watchTree(set, root, path, true);
  }

  private cannotWatch(dir: string, why: string): void {
    if (this.warned) return;
    this.warned = true;
    this.o.log.warn(
      `cannot watch ${dir} for denied paths (${why}): a denied path created there later is hidden from the sandboxed server only when it is next restarted`,
    );
  }
}

/** Close the watches of `path` and below (it went away, or was renamed). */
function unwatchBelow(set: WatchSet, path: string): void {
  for (const [dir, w] of set.watchers) {
    if (!inside(dir, path)) continue;
    w.close();
    set.watchers.delete(dir);
  }
}
