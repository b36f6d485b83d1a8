/**
 * A directory watched to a depth by chokidar, optionally only through the directories a glob
 * could enter. chokidar follows each directory it entered by its inode, not its name: when one is
 * renamed away and another moved in under its name (a swap, faster than chokidar reads the
 * parent again), the name stays watched through the old inode and the newcomer not at all, so
 * what is made in it later is never seen. So a rename of a directory the watch enters opens the
 * watch afresh (it covers only what the glob enters), and then reports the whole directory
 * changed, so that whatever happened meanwhile is looked at again.
 */
import { lstat, stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import type { FSWatcher } from 'chokidar';
import type { OnError, OnEvent, WatchEvent, WatchHandle } from './watch-dir.js';
import { flooded, WatchFlood } from '../common/watch-flood.js';
import { isStrictlyInside } from '../common/segments.js';

export interface DepthWatch {
  /** The canonical directory watched. */
  real: string;
  depth: number;
  /** How a canonical path is reported (under the caller's spelling of the directory). */
  name: (path: string) => string;
  /** Whether a directory below `real` (its names, one per level) is entered; undefined: all. */
  enters: ((names: readonly string[]) => boolean) | undefined;
  /** Whether a setup error means "cannot watch by events" (it is thrown, not reported). */
  isSetupError: (err: Error) => boolean;
}

/** The least time between two openings: a storm of renames opens the watch once per gap. */
const REOPEN_GAP_MS = 100;
/** A watched directory that went away is looked for this often, this many times. */
const GONE_GAP_MS = 50;
const GONE_LOOKS = 40;

export async function watchToDepth(
  w: DepthWatch,
  onEvent: OnEvent,
  onError: OnError,
): Promise<WatchHandle> {
  let closed = false;
  /** The caller closed the handle: nothing more is reported. */
  let released = false;
  /**
   * The opening afresh: none, waiting for its gap, or under way. Only one is ever under way: two
   * at once each opened a watcher and one was never closed, and its stale `fs.watch` of a
   * replaced directory was then shared by every later opening (chokidar shares one per path in
   * a process), so what was made in the newcomer was never seen.
   */
  let reopening: 'no' | 'waiting' | 'running' = 'no';
  /** A rename came while an opening was under way: another follows it. */
  let again = false;
  let openedAt = 0;
  /** The chokidar watcher in place; undefined until the first opening ends. */
  let current: FSWatcher | undefined;
  /**
   * The first opening, ended either way. A rename seen while it reads asks for an opening
   * afresh, which may come due before it ends (a storm, a loaded machine): it waits for it.
   */
  let first: Promise<unknown> = Promise.resolve();

  /** Whether the entry at `path` (canonical) is a directory the watch would enter. */
  const entered = async (path: string): Promise<boolean> => {
    const names = relative(w.real, path).split(sep);
    if (names.length > w.depth || names[0] === '..' || names[0] === '') return false;
    if (w.enters !== undefined && !w.enters(names)) return false;
    try {
      return (await lstat(path)).isDirectory();
    } catch {
      return false; // gone: its parent's own events say so
    }
  };

  /** Open the watch afresh, at most once per gap; then the whole directory is looked at again. */
  const reopen = (): void => {
    if (closed) return;
    if (reopening === 'running') again = true;
    if (reopening !== 'no') return;
    reopening = 'waiting';
    const wait = Math.max(0, openedAt + REOPEN_GAP_MS - Date.now());
    setTimeout(() => void reopenNow(), wait).unref();
  };

  const reopenNow = async (): Promise<void> => {
    reopening = 'running';
    again = false;
    try {
      // The old watch goes first: chokidar shares one fs.watch per path among its watchers in
      // a process, and a new one opened beside the old would take over the stale watch of the
      // old inode. What happens in between is looked at by the event below.
      await first;
      // A first opening that failed closed the watch: the caller has its error.
      await current?.close();
      if (!closed) {
        current = await open();
        openedAt = Date.now();
        if (closed) await current.close();
      }
    } catch (err) {
      // The old watch is closed and no new one is in place: this handle watches nothing now.
      // The caller opens a watch afresh (or, if the directory went, plans one elsewhere);
      // looking for the directory here returned when it came back as the same inode (moved
      // away and back), and left it unwatched.
      // (A flood seen while it opened closed it too, and is reported here as well.)
      if (!released) {
        closed = true;
        onError(err as Error);
      }
    }
    reopening = 'no';
    if (closed) return;
    onEvent({ kind: 'rename', path: w.name(w.real) });
    // A swap during the opening may have been read half-way: open once more after the gap.
    if (again) reopen();
  };

  /**
   * The watched directory itself was moved or removed, or another put in its place (inotify
   * names it by its base name; an entry of that name inside it looks the same): the watch is
   * opened afresh once a directory stands at its path. Even when that is the same directory
   * (moved away and back): chokidar, finding it gone, may already have dropped its own watches
   * of it, and kept none when it came back, so nothing made in it was seen again (its inode
   * number, compared before, said the watch was still in place). While none stands there it is
   * looked for, for a while; then the handle reports itself lost.
   */
  const lookForSelf = async (): Promise<void> => {
    for (let i = 0; i < GONE_LOOKS && !closed; i++) {
      try {
        if ((await stat(w.real)).isDirectory()) return reopen();
      } catch {
        // missing: look again
      }
      await new Promise((r) => setTimeout(r, GONE_GAP_MS).unref());
    }
    // Still gone: this handle watches nothing, and says so (watch-dir.ts `maybeSelf`).
    if (closed) return;
    closed = true;
    void current?.close();
    onError(Object.assign(new Error(`ENOENT: ${w.name(w.real)} went away`), { code: 'ENOENT' }));
  };

  const open = async (): Promise<FSWatcher> => {
    const { watch: chokidarWatch } = await import('chokidar');
    const { real, enters } = w;
    const watcher = chokidarWatch(real, {
      depth: w.depth,
      // Only the directories a glob could enter: every other one to the depth is not read or
      // watched (a base of /tmp would otherwise take the user's whole inotify allowance). And no
      // entry that is not a directory: chokidar gives each file an inotify watch of its own, so
      // 100,000 files made under the base took 100,000 of the user's watches (every program's
      // watches then failed). What they do is in their directory's raw events, reported below.
      ignored: (p: string, stats?: { isDirectory(): boolean }) =>
        isStrictlyInside(p, real) &&
        stats !== undefined &&
        (!stats.isDirectory() || (enters !== undefined && !enters(relative(real, p).split(sep)))),
      ignoreInitial: true,
      usePolling: false,
      followSymlinks: false,
      atomic: false,
    });
    let setupError: Error | undefined;
    let ready = false;
    let notReady = () => {};
    watcher.on('error', (e) => {
      const err = e instanceof Error ? e : new Error(String(e));
      if (!ready && w.isSetupError(err)) setupError ??= err;
      else onError(err);
    });
    const emit = (kind: WatchEvent['kind']) => (p: string) => onEvent({ kind, path: w.name(p) });
    watcher.on('add', emit('create'));
    watcher.on('addDir', emit('create'));
    watcher.on('unlink', emit('delete'));
    watcher.on('unlinkDir', emit('delete'));
    watcher.on('change', emit('change'));
    // Raw events arrive before chokidar's own readdir, and include attribute changes of
    // directories and the removal of the watched directory itself.
    watcher.on('raw', (event, evPath, details) => {
      if (closed) return;
      if (flooded()) {
        // chokidar's closers close its fs.watch handles at once, in this turn (common/watch-flood.ts).
        closed = true;
        void watcher.close();
        const err = new WatchFlood(w.name(real));
        if (ready) onError(err);
        else {
          setupError ??= err;
          notReady();
        }
        return;
      }
      const watched = (details as { watchedPath?: string }).watchedPath;
      if (watched === undefined) return;
      const p = evPath ? join(watched, evPath) : watched;
      onEvent({ kind: event === 'rename' ? 'rename' : 'change', path: w.name(p) });
      // inotify names the watched directory itself by its base name when it moves or goes.
      if (watched === w.real && evPath === basename(w.real)) void lookForSelf();
      // So it does a directory below, and that may be the only event of its swap: chokidar may
      // set the watches below a directory before the directory's own, and a swap in between
      // left the watch below on the old directory, with nothing to tell the new one's watch.
      else if (event === 'rename' && evPath === basename(watched)) reopen();
      // Once an opening waits for its gap, further renames need no look of their own.
      if (event === 'rename' && evPath && reopening !== 'waiting') {
        void entered(p).then((yes) => {
          if (yes) reopen();
        });
      }
    });
    // A watch closed for a flood is never ready.
    await new Promise<void>((resolve) => {
      notReady = resolve;
      watcher.once('ready', resolve);
    });
    ready = true;
    try {
      // Gone while chokidar read it (which it takes silently): no watch is in place.
      await stat(real);
    } catch (err) {
      await watcher.close();
      throw err;
    }
    if (setupError) {
      await watcher.close();
      throw setupError;
    }
    return watcher;
  };

  const opening = open();
  first = opening.catch(() => {});
  try {
    current = await opening;
  } catch (err) {
    closed = true;
    throw err;
  }
  return {
    close: async () => {
      closed = released = true;
      await current?.close();
    },
  };
}
