/**
 * The links on the way to what the daemon watches (a policy file, an include glob's directory,
 * a root's directory), and the directories holding them. A link re-pointed moves everything
 * below it, and the only event is the link's own, in the directory holding it: unwatched, an
 * include's new place, or a root glob's, went unseen until the rescan (300 s), and the old
 * place's directories stayed served.
 */
import { lstat, readlink, realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { linksOnTheWay, type LinkFs } from '../common/links-on-the-way.js';

export interface LinksToward {
  /** Each link, named where it lies (common/links-on-the-way.ts). */
  links: Set<string>;
  /** The directories holding them. */
  holders: string[];
}

/**
 * The links on the way to each of `paths`, and where they lie. `located`: where each path led
 * (undefined: missing), when the caller has just asked.
 */
export async function linksToward(
  paths: readonly string[],
  located?: ReadonlyMap<string, string | undefined>,
): Promise<LinksToward> {
  const links = new Set<string>();
  const fs = sharedCalls();
  // A path known to be its own real path has no link on the way: nothing to ask.
  const asked = paths.filter((p) => located?.get(p) !== p);
  for (const found of await Promise.all(asked.map((p) => linksOf(p, located, fs)))) {
    for (const link of found) links.add(link);
  }
  return { links, holders: [...new Set([...links].map((link) => dirname(link)))] };
}

/**
 * A path that is its own real path has no link on the way: one `realpath` (one call on the
 * thread pool) instead of an `lstat` per level. Every plan asks this for each root's directory;
 * walked level by level, 1,000 roots eight levels down took 100-250 ms of the thread pool at
 * each directory change (`npm run bench -- plan-roots`). A path that is missing, or leads
 * elsewhere, is walked.
 */
async function linksOf(
  path: string,
  located: ReadonlyMap<string, string | undefined> | undefined,
  fs: LinkFs,
): Promise<string[]> {
  const real = located?.has(path) ? located.get(path) : await realpath(path).catch(() => undefined);
  return real === path ? [] : linksOnTheWay(path, fs);
}

/**
 * `lstat` and `readlink`, each path asked once however many walks pass it: the roots under one
 * link share every level above it.
 */
function sharedCalls(): LinkFs {
  const stats = new Map<string, ReturnType<LinkFs['lstat']>>();
  const targets = new Map<string, Promise<string>>();
  const once = <T>(cache: Map<string, Promise<T>>, path: string, call: () => Promise<T>) => {
    let p = cache.get(path);
    if (p === undefined) cache.set(path, (p = call()));
    return p;
  };
  return {
    lstat: (path) => once(stats, path, () => lstat(path)),
    readlink: (path) => once(targets, path, () => readlink(path)),
  };
}
