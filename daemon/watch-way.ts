/**
 * The directories above what the daemon watches. A watch follows its directory's inode, and
 * inotify tells a watch nothing when a directory above it is renamed: after `mv work work.old;
 * mkdir -p work/app`, the watch of `work/app` went on watching `work.old/app`, the plan kept it
 * (same path, same key), and what was made in the new `work/app` went unseen until the rescan
 * (300 s). Every directory on the way to a watched one is watched for its entry on that way
 * (`watcher.ts` `wayEvent`): the event naming it is the only one the kernel gives.
 */
import { dirname } from 'node:path';

export interface Way {
  /** Each watched directory, and every directory above it but `/`: the names that matter. */
  names: Set<string>;
  /** The directories holding them. */
  dirs: Set<string>;
}

/**
 * The way to each of `dirs` (canonical paths): string work only, as the paths are canonical (the
 * links on a written way are the links role's, watch-links.ts).
 */
export function wayTo(dirs: Iterable<string>): Way {
  const names = new Set<string>();
  for (let path of dirs) {
    // Shared ways stop at the first name already there: its own way was added with it.
    while (path !== '/' && !names.has(path)) {
      names.add(path);
      path = dirname(path);
    }
  }
  return { names, dirs: new Set([...names].map((n) => dirname(n))) };
}
