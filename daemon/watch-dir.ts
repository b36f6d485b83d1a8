/**
 * One directory watched for changes to its own entries, with one `fs.watch` (one inotify watch)
 * and nothing else: what a `dir/*` glob's base and a plain root's parent need. Chokidar, asked
 * for the same (depth 0), reads and `lstat`s every entry of the directory when it starts and
 * reads the whole directory again on each event, which for a base of 100,000 entries is
 * seconds of work per start and per change. Here an event costs one `lstat` of the entry it
 * names.
 */
import { lstatSync, type FSWatcher } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { guardedWatch, WatchFlood } from '../common/watch-flood.js';

/**
 * What happened to `path`: an entry appeared, disappeared, was renamed (either), or changed
 * (content or metadata; the watcher tells them apart).
 */
export interface WatchEvent {
  kind: 'create' | 'delete' | 'rename' | 'change';
  path: string;
  /** For a creation the watch has already `lstat`ed: whether the entry is a symlink. */
  link?: boolean;
}

/** An open watch. */
export interface WatchHandle {
  close(): Promise<void>;
}

export type OnEvent = (event: WatchEvent) => void;
export type OnError = (err: Error) => void;

/**
 * Watch the directory `real` (canonical, a directory); report paths under `given` (the
 * caller's spelling). Rejects with the system error when the watch cannot be set.
 */
export function watchEntries(
  real: string,
  given: string,
  onEvent: OnEvent,
  onError: OnError,
): Promise<WatchHandle> {
  const own = basename(real);
  const child = (name: string) => (given === '/' ? `/${name}` : `${given}/${name}`);
  let closed = false;
  let watcher: FSWatcher;

  /**
   * A `rename` names an entry that appeared or went (or moved in or out): tell which. The
   * `lstat` is made directly, in the event's own turn: through libuv's thread pool it cost a
   * hop of about 0.2 ms, and up to tens of milliseconds when the pool was busy with other
   * work, before the recompute could start (the entry is in a directory being watched, on
   * the same filesystems the engine canonicalizes directly; see policies/fs.ts). Still an async
   * function, run to its end at once: what `onEvent` throws stays a rejection, which the daemon
   * logs, not an exception out of the watch's callback.
   */
  // eslint-disable-next-line @typescript-eslint/require-await -- see above
  const renamed = async (name: string): Promise<void> => {
    const path = child(name);
    let event: WatchEvent;
    try {
      event = { kind: 'create', path, link: lstatSync(path).isSymbolicLink() };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      event = { kind: code === 'ENOENT' ? 'delete' : 'rename', path };
    }
    if (!closed) onEvent(event);
  };

  /**
   * inotify names the directory itself (by its base name) when it is removed or moved away,
   * and then stops watching it; an entry of that name inside it looks the same. A directory
   * standing at the path is watched afresh, even one with the inode number the watch was set
   * on: the number was read a moment before the watch was set, and a directory swapped in
   * between and out again left the watch on that one, while the number said it was in place.
   */
  const maybeSelf = async (): Promise<void> => {
    let there = false;
    try {
      there = (await stat(real)).isDirectory();
    } catch {
      // gone: reported below
    }
    if (closed) return;
    try {
      watcher.close();
      // Gone: this handle watches nothing, and says so. Kept, it was taken for the watch of the
      // directory that came back a moment later, if the full look came after that (a stand-in
      // removed and the original moved back), and nothing made there was seen again.
      if (!there) throw Object.assign(new Error(`ENOENT: ${given} went away`), { code: 'ENOENT' });
      watcher = open();
    } catch (err) {
      // No watch in place now: the caller opens one afresh, or plans one elsewhere.
      closed = true;
      onError(err as Error);
      return;
    }
    onEvent({ kind: 'rename', path: given });
  };

  /** Events came faster than they could be handled (common/watch-flood.ts): closed for good. */
  const flood = (): void => {
    if (closed) return;
    closed = true;
    onError(new WatchFlood(given));
  };

  const open = (): FSWatcher => {
    const w = guardedWatch(
      real,
      { persistent: true },
      (event, name) => {
        if (closed) return;
        if (name === null) {
          // No entry named: anything may have changed. (A queue overflow is never reported:
          // libuv drops its notice, which common/watch-flood.ts makes up for.)
          onEvent({ kind: 'rename', path: given });
          return;
        }
        if (name === own) {
          // The directory itself (its attributes, or its removal), or an entry of the same name.
          if (event === 'change') onEvent({ kind: 'change', path: given });
          else void maybeSelf();
        }
        if (event === 'change') onEvent({ kind: 'change', path: child(name) });
        else void renamed(name);
      },
      flood,
    );
    w.on('error', (err) => {
      if (!closed) onError(err);
    });
    return w;
  };
  try {
    watcher = open();
  } catch (err) {
    return Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
  return Promise.resolve({
    close: () => {
      closed = true;
      watcher.close();
      return Promise.resolve();
    },
  });
}
