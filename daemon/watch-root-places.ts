/**
 * Where the roots' watched directories lead now, and the links on the way to them: a root's
 * watch is keyed by the real directory it reaches (watch-list.ts), so that a link on the way
 * re-pointed gets a new watch, and the directories holding those links are watched too, so that
 * the re-point itself is seen (watch-links.ts).
 */
import type { RootWatches } from '../policies/index.js';
import type { PolicyDir } from './watch-list.js';
import { linksToward } from './watch-links.js';
import { locate } from './watch-policy.js';

export interface RootPlaces {
  /** Each watched directory's real path (undefined: missing). */
  located: Map<string, string | undefined>;
  /** The links on the way to them, named where each lies. */
  links: Set<string>;
  /** The directories holding those links, with where each leads. */
  linkDirs: PolicyDir[];
}

/** Every directory the roots' watches are set on. */
function rootDirs(w: RootWatches): string[] {
  return [...w.dirs.map((d) => d.path), ...w.recursive.map((r) => r.path)];
}

/** Where each of them leads now: enough to key the watches a reload sets before its walk. */
export async function locateRoots(w: RootWatches): Promise<Map<string, string | undefined>> {
  return new Map((await locate(rootDirs(w))).map((d) => [d.path, d.real]));
}

/**
 * What a plan needs: where each leads, and the links on the way. One `realpath` per directory;
 * only those that are not their own real path are walked for links (watch-links.ts).
 */
export async function rootPlaces(w: RootWatches): Promise<RootPlaces> {
  const located = await locateRoots(w);
  const way = await linksToward(rootDirs(w), located);
  return { located, links: way.links, linkDirs: await locate(way.holders) };
}
