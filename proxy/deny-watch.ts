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
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DenyAccess, Root } from '../common/types.js';
import type { ProxyLogger } from './log.js';
import { denyTest, inside } from './sandbox-mounts.js';

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

export class DenyWatch {
  private readonly watchers = new Map<string, FSWatcher>();
  private key = '';
  private warned = false;
  private generation = 0;

  constructor(private readonly o: DenyWatchOptions) {}

  /**
   * Watch these roots for their denies (`_meta['mcp-roots/deny']`); resolves once every directory
   * is watched. The same roots and denies as before keep the watches they have.
   */
  async update(roots: readonly Root[]): Promise<void> {
    const key = JSON.stringify(roots.map((r) => [r.uri, r._meta['mcp-roots/deny'] ?? []]));
    if (key === this.key) return;
    this.close();
    this.key = key;
    const generation = this.generation;
    for (const r of roots) {
      const denies = (r._meta['mcp-roots/deny'] ?? []).map((d) => ({
        test: denyTest(d),
        access: d.access,
      }));
      if (denies.length === 0) continue;
      const root: WatchedRoot = { path: fileURLToPath(r.uri), denies };
      await this.watchTree(root, root.path, false, generation);
    }
  }

  /** Stop watching everything. */
  close(): void {
    this.generation++;
    this.key = '';
    for (const w of this.watchers.values()) w.close();
    this.watchers.clear();
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
    root: WatchedRoot,
    dir: string,
    report: boolean,
    generation: number,
  ): Promise<void> {
    if (generation !== this.generation || this.watchers.has(dir)) return;
    if (this.watchers.size >= (this.o.maxDirs ?? 50_000))
      return this.cannotWatch(dir, 'too many directories');
    let w: FSWatcher;
    try {
      w = watch(dir, { persistent: false }, (event, name) => {
        if (event === 'rename' && name !== null)
          this.onEntry(root, join(dir, String(name)), generation);
      });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A directory that went away meanwhile needs no watch; anything else is a blind spot.
      if (code !== 'ENOENT' && code !== 'ENOTDIR') this.cannotWatch(dir, (err as Error).message);
      return;
    }
    w.on('error', () => this.unwatchBelow(dir));
    this.watchers.set(dir, w);
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = join(dir, e.name);
      const denied = e.isSymbolicLink() ? undefined : this.denial(root, p);
      if (denied !== undefined) {
        if (report) this.o.onDenied(denied);
        continue;
      }
      if (e.isDirectory()) await this.watchTree(root, p, report, generation);
    }
  }

  /** An entry of a watched directory appeared, went away, or was renamed (either end). */
  private onEntry(root: WatchedRoot, path: string, generation: number): void {
    if (generation !== this.generation) return;
    // A synchronous lstat: the report must not wait behind anything else the proxy does.
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (st === undefined) return this.unwatchBelow(path);
    // A link is not mounted over (sandbox-mounts.ts): its target is shown or hidden on its own.
    if (st.isSymbolicLink()) return;
    const denied = this.denial(root, path);
    if (denied !== undefined) return this.o.onDenied(denied);
    if (st.isDirectory()) void this.watchTree(root, path, true, generation);
  }

  private unwatchBelow(path: string): void {
    for (const [dir, w] of this.watchers) {
      if (!inside(dir, path)) continue;
      w.close();
      this.watchers.delete(dir);
    }
  }

  private cannotWatch(dir: string, why: string): void {
    if (this.warned) return;
    this.warned = true;
    this.o.log.warn(
      `cannot watch ${dir} for denied paths (${why}): a denied path created there later is hidden from the sandboxed server only when it is next restarted`,
    );
  }
}
