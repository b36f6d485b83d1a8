/**
 * A directory tree watched with one `fs.watch` (one inotify watch) per directory: what a `**`
 * glob's base needs when the tree is of moderate size. @parcel/watcher, the recursive watcher
 * for larger trees, holds every event for a fixed 50 ms (its debounce is not an option), which
 * was the whole of a `dir/**\/x` mkdir's latency; here an event is reported as soon as the new
 * subtree is watched.
 *
 * The same tree, cut to a depth and to the directories a glob could enter (`depth`, `enters`),
 * is the watch of a glob below its base (`base/keep*\/src/*`). chokidar did that before, and
 * dropped an `fs.watch` it had just made when it was closed in the moment between making it and
 * keeping it: nothing closed that watch again, it held the daemon's process open, and a later
 * watcher of the same path shared it (chokidar shares one per path in a process). Here every
 * watch is in `watched` the turn it is made, so a close closes it.
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
 * Every look at the filesystem that decides what is watched (an event's `lstat` of its entry and
 * `realpath` of its directory, a new watch's check of what it landed on) is made synchronously,
 * in the turn that acts on it. Made on the thread pool, two looks (at a path and at its parent,
 * or at the same path twice) ended in any order, and one that had seen a directory away for a
 * moment could close, after the fact, a watch a newer look had just set: the directory stayed
 * unwatched until the periodic rescan. Now each look acts on a state no older than any look
 * before it; a change made after a look queues its own event, and the look that event starts
 * comes later and repairs what the earlier one did (see `renamed`). Only reading a new
 * directory's entries stays asynchronous: what it finds is checked again as it is watched.
 *
 * Beyond `cap` directories the tree is left to the caller's fallback (`TreeTooLarge` at the
 * start, `onOverflow` later): per-directory watches cost Node a handle and an object each.
 */
import { lstatSync, realpathSync, type FSWatcher, type Stats } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { errnoCode } from '../common/errors.js';
import type { OnError, OnEvent, WatchHandle } from './watch-dir.js';
import { guardedWatch, WatchFlood } from '../common/watch-flood.js';

/** A tree's watch, and which directories it watches one by one (for tests and status). */
export interface TreeHandle extends WatchHandle {
  directories(): string[];
  /** Resolves once no walk of a new subtree is under way (tests: the watches are in place). */
  settled(): Promise<void>;
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
  /** Levels below the root watched: a directory `depth` levels down is, one below it is not. */
  depth?: number;
  /** Whether a directory below the root (its names, one per level) is watched; undefined: all. */
  enters?: (names: readonly string[]) => boolean;
}

interface Watched {
  watcher: FSWatcher;
  ino: number;
}

const gone = (err: unknown) => ['ENOENT', 'ENOTDIR'].includes(errnoCode(err) ?? '');

/** `lstat` now, in this turn; the error instead of a throw. */
const lstatNow = (path: string): Stats | Error => {
  try {
    return lstatSync(path);
  } catch (err) {
    return err as Error;
  }
};

/** The canonical path of `path` now, in this turn; undefined when it cannot be resolved. */
const realpathNow = (path: string): string | undefined => {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
};

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
  const depth = opts.depth ?? Infinity;
  /** Whether `dir` (the root, or a directory under it) is within the depth and entered. */
  const admitted = (dir: string): boolean => {
    if (dir === root) return true;
    const names = dir.slice(root === '/' ? 1 : root.length + 1).split('/');
    return names.length <= depth && (opts.enters?.(names) ?? true);
  };

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
    if (closed || overflowed || watched.has(dir) || !admitted(dir)) return [];
    if (watched.size >= cap) throw new TreeTooLarge(root, cap);
    let watcher: FSWatcher;
    try {
      watcher = guardedWatch(
        dir,
        { persistent: true },
        (event, name) => onRaw(dir, event, name),
        onFlood,
      );
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
    // inotify followed whatever `dir` is now: a link put in its place, or in the place of a
    // directory above it, leads out of the tree, so such a watch is closed again. Checked in
    // the same turn as the watch was set: a check that ended later could close a watch that a
    // newer look had set meanwhile, on a state that no longer held.
    const st = lstatNow(dir);
    const real = realpathNow(dir);
    if (st instanceof Error || !st.isDirectory() || real !== dir) {
      watcher.close();
      if (st instanceof Error && errnoCode(st) === 'EACCES') {
        refused.add(dir);
        return [];
      }
      if (st instanceof Error && !gone(st)) throw st;
      return [];
    }
    const entry: Watched = { watcher, ino: st.ino };
    watched.set(dir, entry);
    refused.delete(dir);
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if (watched.get(dir) === entry) {
        watched.delete(dir);
        watcher.close();
      }
      // Gone meanwhile: the event of that change is acted on by a look.
      if (gone(err)) return [];
      if (errnoCode(err) === 'EACCES') {
        refused.add(dir);
        return [];
      }
      throw err;
    }
    // Forgotten meanwhile (it went, or is watched afresh): whoever forgot it walks what is there.
    if (watched.get(dir) !== entry) return [];
    return entries
      .filter((e) => e.isDirectory() && !ignore.has(e.name))
      .map((e) => child(dir, e.name));
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

  /** Walks of new subtrees under way (`settled`). */
  const walks = new Set<Promise<void>>();

  /** A subtree to watch after the start: past the cap, the caller's fallback takes over. */
  const grow = (top: string): Promise<void> => {
    const run = (async () => {
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
    })().finally(() => walks.delete(run));
    walks.add(run);
    return run;
  };

  /**
   * `path` appeared or went (or moved in or out): tell which, watching what appeared first.
   *
   * The look is made now, in the event's turn, and acts at once: looks act in the order of their
   * events, each on a state no older than the one before it. Its two system calls still see two
   * moments: a directory above `path` moved away and back between them (or a parent replaced)
   * can make it act on a state that held for an instant only, e.g. close the watch of a directory
   * that stands. Every such change queues events after this one: a directory moved or removed
   * reports itself to its own watch (`stale` below), and its parent's watch reports its name, so
   * a later look watches its whole subtree afresh.
   *
   * `stale`: the event named the watched directory itself (removed or moved away): its watch,
   * and those below it, are dead or follow it elsewhere. The inode number cannot tell: a
   * directory removed and made again at once often gets the number back, and one moved out and
   * back has its own.
   */
  const renamed = async (path: string, stale = false): Promise<void> => {
    const parent = dirname(path);
    const st = lstatNow(path);
    const real = realpathNow(parent);
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
    } else if (!known || known.ino !== st.ino || stale) {
      // New, or another directory moved into the place of a watched one (or its watch is dead).
      if (known) forget(path);
      await grow(path);
      if (closed || overflowed) return;
    }
    onEvent({ kind: 'create', path, link: st.isSymbolicLink() });
  };

  /**
   * The root went, or another directory stands in its place: the tree watches something that is
   * no longer there, so it is watched afresh, or, if nothing stands there, reported lost (the
   * caller plans the watch elsewhere, or opens it afresh). Kept, a tree on a removed stand-in
   * was taken for the watch of the original moved back a moment later. The same directory back
   * (its inode number, read in the turn its watch was set) needs nothing: its watches followed it.
   */
  const rootRenamed = (): void => {
    const st = lstatNow(root);
    if (!(st instanceof Error) && st.isDirectory() && watched.get(root)?.ino === st.ino) return;
    if (st instanceof Error || !st.isDirectory() || realpathNow(root) !== root) {
      closed = true;
      closeAll();
      onError(Object.assign(new Error(`ENOENT: ${root} went away`), { code: 'ENOENT' }));
      return;
    }
    forget(root);
    void grow(root);
  };

  /** Events came faster than they could be handled (common/watch-flood.ts): the tree is closed. */
  const onFlood = (): void => {
    if (closed || overflowed) return;
    closed = true;
    closeAll();
    onError(new WatchFlood(root));
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
      // removal or move, which a full look decides.
      if (event !== 'change') rootRenamed();
      onEvent({ kind: event === 'change' ? 'change' : 'rename', path: root });
    }
    if (dir !== root && entry === basename(dir) && event === 'rename') {
      // Perhaps the watched directory itself went or moved away: its watch is dead (or follows
      // it elsewhere). It is watched afresh if a directory stands there.
      void renamed(dir, true);
    }
    if (event === 'change') {
      // A directory that refused a watch may have been given permission: reported once its
      // subtree is watched, so that what the walk found is covered by the report.
      if (refused.has(path))
        void grow(path).then(() => {
          if (!closed && !overflowed) onEvent({ kind: 'change', path });
        });
      else onEvent({ kind: 'change', path });
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
    settled: async () => {
      while (walks.size > 0) await Promise.all(walks);
    },
  };
}
