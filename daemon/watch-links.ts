/**
 * The links on the way to what the daemon watches (a policy file, an include glob's directory,
 * a root's directory), and the directories holding them. A link re-pointed moves everything
 * below it, and the only event is the link's own, in the directory holding it: unwatched, an
 * include's new place, or a root glob's, went unseen until the rescan (300 s), and the old
 * place's directories stayed served.
 */
import { lstat, readlink } from 'node:fs/promises';
import { dirname } from 'node:path';
import { linksOnTheWay } from '../common/links-on-the-way.js';

export interface LinksToward {
  /** Each link, named where it lies (common/links-on-the-way.ts). */
  links: Set<string>;
  /** The directories holding them. */
  holders: string[];
}

/** The links on the way to each of `paths`, and where they lie. */
export async function linksToward(paths: readonly string[]): Promise<LinksToward> {
  const links = new Set<string>();
  for (const found of await Promise.all(paths.map((p) => linksOnTheWay(p, { lstat, readlink })))) {
    for (const link of found) links.add(link);
  }
  return { links, holders: [...new Set([...links].map((link) => dirname(link)))] };
}
