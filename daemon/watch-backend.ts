/** How the daemon watches a directory: its own entries, a tree to a depth, or a whole tree. */
import { realpath, stat } from 'node:fs/promises';
import { sep } from 'node:path';
import { errnoCode } from '../common/errors.js';
import { TREE_WATCH_CAP, TreeTooLarge, watchTree } from './watch-tree.js';
import {
  watchEntries,
  type OnError,
  type OnEvent,
  type WatchEvent,
  type WatchHandle,
} from './watch-dir.js';

export type { WatchEvent, WatchHandle };

/** Opens watches; rejects with the system error when one cannot be set (ENOSPC, EMFILE, EACCES ...). */
export interface WatchBackend {
  /** Watch `path` and its entries, non-recursively down to `depth` levels below it. */
  /**
   * `enters`: for a depth-limited watch, whether a directory below `path` (its names, one per
   * level) is watched; undefined watches every one to `depth`.
   */
  dir(
    path: string,
    depth: number,
    onEvent: OnEvent,
    onError: OnError,
    enters?: (names: readonly string[]) => boolean,
  ): Promise<WatchHandle>;
  /** Watch the whole tree under `path`, skipping directories named in `ignore`. */
  recursive(
    path: string,
    ignore: string[],
    onEvent: OnEvent,
    onError: OnError,
  ): Promise<WatchHandle>;
}

/**
 * Error codes that mean "cannot watch this by events now", as opposed to a path that went away;
 * `FLOOD` is the daemon's own (common/watch-flood.ts).
 */
const DEGRADE_CODES = ['ENOSPC', 'EMFILE', 'ENFILE', 'EACCES', 'EPERM', 'FLOOD'] as const;
/** `LOST`: an open watch reported any other error, so it may watch nothing now (watcher.ts). */
export type DegradeCode = (typeof DEGRADE_CODES)[number] | 'LOST';

/** The code of an error that should put a path in degraded mode, or undefined. */
export function degradeCode(err: unknown): DegradeCode | undefined {
  const code = errnoCode(err);
  const known = DEGRADE_CODES as readonly string[];
  if (code !== undefined && known.includes(code)) return code as DegradeCode;
  // @parcel/watcher's native errors carry only a message (strerror).
  const message = err instanceof Error ? err.message : '';
  if (/No space left on device|ENOSPC/.test(message)) return 'ENOSPC';
  if (/Too many open files|EMFILE/.test(message)) return 'EMFILE';
  if (/Permission denied|EACCES/.test(message)) return 'EACCES';
  if (/Operation not permitted|EPERM/.test(message)) return 'EPERM';
  return undefined;
}

/** `onEvent`, told paths under the caller's spelling of the directory, not its canonical one. */
function respelled(real: string, given: string, onEvent: OnEvent): OnEvent {
  if (real === given) return onEvent;
  const name = (p: string) =>
    p === real ? given : p.startsWith(real + sep) ? given + p.slice(real.length) : p;
  return (e) => onEvent({ ...e, path: name(e.path) });
}

/** One `fs.watch` for a directory's own entries; a tree (watch-tree.ts) to a depth, or for `**`. */
export const defaultBackend: WatchBackend = {
  async dir(path, depth, onEvent, onError, enters) {
    // Watch the canonical directory so that a symlinked one is watched inside, not as a link.
    const real = await realpath(path);
    if (!(await stat(real)).isDirectory()) {
      throw Object.assign(new Error(`ENOTDIR: not a directory, watch '${path}'`), {
        code: 'ENOTDIR',
      });
    }
    // A directory's own entries need one inotify watch, not chokidar's walk of every entry.
    if (depth === 0) return watchEntries(real, path, onEvent, onError);
    // Deeper, one watch per directory the glob could enter, to its depth. No cap: each such
    // directory is one the glob may match below, and past the user's inotify allowance the
    // watch is degraded to rescans like any other (ENOSPC).
    return watchTree(real, respelled(real, path, onEvent), onError, {
      ignore: [],
      depth,
      enters,
      cap: Infinity,
      onOverflow: () => {},
    });
  },

  recursive: (path, ignore, onEvent, onError) =>
    watchRecursive(path, ignore, onEvent, onError, TREE_WATCH_CAP),
};

/** The default backend with another tree cap (tests: a small cap makes the hand-over cheap). */
export function makeBackend({ treeCap }: { treeCap: number }): WatchBackend {
  return {
    ...defaultBackend,
    recursive: (path, ignore, onEvent, onError) =>
      watchRecursive(path, ignore, onEvent, onError, treeCap),
  };
}

/**
 * The whole tree under `path`: one watch per directory up to `treeCap` directories
 * (watch-tree.ts), @parcel/watcher beyond.
 */
async function watchRecursive(
  path: string,
  ignore: string[],
  onEvent: OnEvent,
  onError: OnError,
  treeCap: number,
): Promise<WatchHandle> {
  const real = await realpath(path);
  const emit = respelled(real, path, onEvent);
  // One watch per directory while the tree is small enough (watch-tree.ts); beyond that, or
  // once it grows past that, @parcel/watcher, which answers 50 ms later but holds its tree in
  // native memory.
  let current: WatchHandle | undefined;
  let closed = false;
  const overflow = () => {
    void (async () => {
      try {
        const next = await parcelWatch(real, ignore, emit, onError);
        if (closed) await next.close();
        else current = next;
      } catch (err) {
        onError(err as Error);
      }
      // What happened while no watch was in place: a full look.
      if (!closed) onEvent({ kind: 'rename', path });
    })();
  };
  try {
    current = await watchTree(real, emit, onError, {
      ignore,
      cap: treeCap,
      onOverflow: overflow,
    });
  } catch (err) {
    if (!(err instanceof TreeTooLarge)) throw err;
    current = await parcelWatch(real, ignore, emit, onError);
  }
  return {
    close: async () => {
      closed = true;
      await current?.close();
    },
  };
}

/** The whole tree under the canonical `real` with @parcel/watcher (one native watcher). */
async function parcelWatch(
  real: string,
  ignore: string[],
  onEvent: OnEvent,
  onError: OnError,
): Promise<WatchHandle> {
  // Loaded on first use: a policy without a large `**` tree never pays for it (~6 MB).
  const parcel = await import('@parcel/watcher');
  const subscription = await parcel.subscribe(
    real,
    (err, events) => {
      if (err) {
        onError(err);
        return;
      }
      for (const e of events) {
        const kind = e.type === 'create' ? 'create' : e.type === 'delete' ? 'delete' : 'change';
        onEvent({ kind, path: e.path });
      }
    },
    { ignore: ignore.flatMap((n) => [`**/${n}`, `**/${n}/**`]) },
  );
  return { close: () => subscription.unsubscribe() };
}

/** One log line: what cannot be watched, what the daemon does instead, and how to fix it. */
export function degradedMessage(path: string, code: DegradeCode, everyMs: number): string {
  const every = `${everyMs / 1000} s`;
  switch (code) {
    case 'ENOSPC':
      return `cannot watch ${path}: the inotify watch limit is reached (ENOSPC); rescanning it every ${every} instead. Raise the limit with \`sudo sysctl fs.inotify.max_user_watches=524288\` (add fs.inotify.max_user_watches=524288 to /etc/sysctl.d/90-inotify.conf to keep it)`;
    case 'EMFILE':
    case 'ENFILE':
      return `cannot watch ${path}: too many open files or inotify instances (${code}); rescanning it every ${every} instead. Raise the limits with \`sudo sysctl fs.inotify.max_user_instances=1024\` and LimitNOFILE= in the service (or \`ulimit -n\`)`;
    case 'EACCES':
    case 'EPERM':
      return `cannot watch ${path}: permission denied (${code}); rescanning it every ${every} instead. Give your user read and search permission on it, or remove it from the policy`;
    case 'LOST':
      return `watching ${path} failed; rescanning it every ${every} instead, and opening its watch afresh at each rescan`;
    case 'FLOOD':
      return `watching ${path}: its events came faster than the daemon could handle them (a process changing it in a loop?); rescanning it every ${every} instead, and watching it by events again once they slow down. If this goes on, find the process changing it`;
  }
}
