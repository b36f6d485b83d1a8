/**
 * A directory tree watched with one `fs.watch` (one inotify watch) per directory: what a `**`
 * glob's base needs when the tree is of moderate size. @parcel/watcher, the recursive watcher
 * for larger trees, holds every event for a fixed 50 ms (its debounce is not an option), which
 * was the whole of a `dir/**\/x` mkdir's latency; here an event is reported as soon as the new
 * subtree is watched.
 *
 * A new directory is watched before it is reported: its own watch is set, then it is read, and
 * every directory found in it is watched the same way, so whatever `mkdir -p a/b/c` made before
 * a watch was in place is found by the reading, and whatever it makes after is reported by the
 * watch. The recompute the report starts walks the subtree after all of that, so it sees the
 * whole of it in one go.
 *
 * Symlinks are never followed: only entries that are directories themselves (not links to one)
 * are watched, and since inotify follows a link it is asked to watch, each directory is looked
 * at again once its watch is set, and a watch that landed on a link (a directory replaced by one
 * in between) is closed at once.
 *
 * Beyond `cap` directories the tree is left to the caller's fallback (`TreeTooLarge` at the
 * start, `onOverflow` later): per-directory watches cost Node a handle and an object each.
 */
import { watch, type FSWatcher } from 'node:fs';
import { lstat, readdir, realpath } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { errnoCode } from '../common/errors.js';
import type { OnError, OnEvent, WatchHandle } from './watch-dir.js';

/** A tree's watch, and which directories it watches one by one (for tests and status). */
export interface TreeHandle extends WatchHandle {
  directories(): string[];
}

/** Directories one tree may watch one by one before the recursive watcher takes over. */
export const TREE_WATCH_CAP = 4096;
/** Directories read at once while a new subtree is walked. */
const WALK_PARALLEL = 16;

/** The tree has more directories than the cap. */
export class TreeTooLarge extends Error {
  constructor(root: string, cap: number) {
    super(`${root} has more than ${cap} directories`);
    this.name = 'TreeTooLarge';
  }
}

export interface TreeOptions {
  /** Directory names not entered at any depth (and whose own events are not reported). */
  ignore: string[];
  cap?: number;
  /** The tree grew past the cap after the start; the handle stops reporting. */
  onOverflow: () => void;
}

interface Watched {
  watcher: FSWatcher;
  ino: number;
}

const gone = (err: unknown) => ['ENOENT', 'ENOTDIR'].includes(errnoCode(err) ?? '');

/** Watch the canonical directory `root` and every directory under it; paths reported are canonical. */
export async function watchTree(
  root: string,
  onEvent: OnEvent,
  onError: OnError,
  opts: TreeOptions,
): Promise<TreeHandle> {
  const cap = opts.cap ?? TREE_WATCH_CAP;
  const ignore = new Set(opts.ignore);
  const watched = new Map<string, Watched>();
  /** Directories that could not be watched (no permission): tried again when their attributes change. */
  const refused = new Set<string>();
  let closed = false;
  let overflowed = false;
  const child = (dir: string, name: string) => (dir === '/' ? `/${name}` : `${dir}/${name}`);

  const closeAll = () => {
    for (const w of watched.values()) w.watcher.close();
    watched.clear();
  };

  /** Stop watching `path` and everything under it (it went, or is being watched afresh). */
  const forget = (path: string) => {
    const prefix = path === '/' ? '/' : `${path}/`;
    for (const p of refused) if (p === path || p.startsWith(prefix)) refused.delete(p);
    for (const [p, w] of watched) {
      if (p === path || p.startsWith(prefix)) {
        w.watcher.close();
        watched.delete(p);
      }
    }
  };

  /** Watch one directory; the directories in it, to be watched next. */
  const watchOne = async (dir: string): Promise<string[]> => {
    if (closed || overflowed || watched.has(dir)) return [];
    if (watched.size >= cap) throw new TreeTooLarge(root, cap);
    let watcher: FSWatcher;
    try {
      watcher = watch(dir, { persistent: true }, (event, name) => onRaw(dir, event, name));
    } catch (err) {
      if (gone(err)) return [];
      if (errnoCode(err) === 'EACCES' && dir !== root) {
        refused.add(dir);
        return [];
      }
      throw err;
    }
    watcher.on('error', (err) => {
      if (!closed && !overflowed) onError(err);
    });
    const entry: Watched = { watcher, ino: 0 };
    watched.set(dir, entry);
    refused.delete(dir);
    try {
      // inotify followed whatever `dir` is now: a link put in its place, or in the place of a
      // directory above it, leads out of the tree, so such a watch is closed again.
      const [st, real] = await Promise.all([lstat(dir), realpath(dir)]);
      if (!st.isDirectory() || real !== dir)
        throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
      entry.ino = st.ino;
      const entries = await readdir(dir, { withFileTypes: true });
      // Forgotten meanwhile (it went, or is watched afresh): whoever forgot it walks what is there.
      if (watched.get(dir) !== entry) return [];
      return entries
        .filter((e) => e.isDirectory() && !ignore.has(e.name))
        .map((e) => child(dir, e.name));
    } catch (err) {
      if (watched.get(dir) === entry) {
        watched.delete(dir);
        watcher.close();
      }
      if (gone(err)) return [];
      if (errnoCode(err) === 'EACCES') {
        refused.add(dir);
        return [];
      }
      throw err;
    }
  };

  /** Watch `top` and every directory under it, a level at a time. */
  const walk = async (top: string): Promise<void> => {
    let level = [top];
    while (level.length > 0 && !closed && !overflowed) {
      const next: string[] = [];
      for (let i = 0; i < level.length; i += WALK_PARALLEL) {
        const found = await Promise.all(level.slice(i, i + WALK_PARALLEL).map(watchOne));
        for (const f of found) next.push(...f);
      }
      level = next;
    }
  };

  /** A subtree to watch after the start: past the cap, the caller's fallback takes over. */
  const grow = async (top: string): Promise<void> => {
    try {
      await walk(top);
    } catch (err) {
      if (closed || overflowed) return;
      if (err instanceof TreeTooLarge) {
        overflowed = true;
        closeAll();
        opts.onOverflow();
      } else {
        onError(err as Error);
      }
    }
  };

  /**
   * The newest look under way at each path. Looks at one path can end out of order (their
   * `lstat` and `realpath` run on the thread pool), and an older look acting last would undo a
   * newer one: a directory moved out and back, seen gone by the first look and back by the
   * second, lost its watches when the first ended last. Only the newest look acts: it began
   * after every event so far, so it sees a state at least as recent as any older one. Whether a
   * watch is known dead (`stale`) is carried over to it.
   */
  const looks = new Map<string, { stale: boolean }>();

  /** `path` appeared or went (or moved in or out): tell which, watching what appeared first. */
  const renamed = async (path: string, stale = false): Promise<void> => {
    const look = { stale: stale || looks.get(path)?.stale === true };
    looks.set(path, look);
    const parent = dirname(path);
    const [st, real] = await Promise.all([
      lstat(path).catch((err: unknown) => err as Error),
      realpath(parent).catch(() => undefined),
    ]);
    if (looks.get(path) !== look) return;
    looks.delete(path);
    if (closed || overflowed) return;
    // The directory the event came from went, or is reached through a link now: the event of
    // that change, from the directory above, is the one that counts.
    if (real !== parent) return;
    if (st instanceof Error) {
      forget(path);
      onEvent({ kind: gone(st) ? 'delete' : 'rename', path });
      return;
    }
    const known = watched.get(path);
    if (!st.isDirectory()) {
      // A file, a link, or something put where a watched directory was.
      if (known) forget(path);
    } else if (!known || known.ino !== st.ino || look.stale) {
      // New, or another directory moved into the place of a watched one (or its watch is dead).
      if (known) forget(path);
      await grow(path);
      if (closed || overflowed) return;
    }
    onEvent({ kind: 'create', path, link: st.isSymbolicLink() });
  };

  const onRaw = (dir: string, event: string, name: string | Buffer | null): void => {
    if (closed || overflowed) return;
    if (name === null) {
      // The kernel did not say which entry (a queue overflow): anything may have changed.
      onEvent({ kind: 'rename', path: root });
      return;
    }
    const entry = String(name);
    if (ignore.has(entry)) return;
    const path = child(dir, entry);
    if (dir === root && entry === basename(root)) {
      // Perhaps the root itself (inotify names it by its base name): its attributes, or its
      // removal, which a full look decides.
      onEvent({ kind: event === 'change' ? 'change' : 'rename', path: root });
    }
    if (dir !== root && entry === basename(dir) && event === 'rename') {
      // Perhaps the watched directory itself went or moved away: its watch is dead. The inode
      // number \`renamed\` compares cannot tell: a directory removed and made again at once often
      // gets the number back, and a watch set on the removed one between the two was then taken
      // for a watch of the new one. It is watched afresh if a directory stands there.
      void renamed(dir, true);
    }
    if (event === 'change') {
      // A directory that refused a watch may have been given permission.
      if (refused.has(path)) void grow(path);
      onEvent({ kind: 'change', path });
    } else {
      void renamed(path);
    }
  };

  try {
    await walk(root);
  } catch (err) {
    closed = true;
    closeAll();
    throw err;
  }
  return {
    close: () => {
      closed = true;
      closeAll();
      return Promise.resolve();
    },
    directories: () => [...watched.keys()].sort(),
  };
}
