/** Which files make up the policy on disk, and a fingerprint of their bytes to tell a real edit from noise. */
import { realpath, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errnoCode } from '../common/errors.js';
import {
  canonicalizeLoose,
  fileHash,
  limitFs,
  lookAtGlob,
  nearestExisting,
  mapBounded,
  MAX_POLICY_BYTES,
  MAX_POLICY_TOTAL_BYTES,
  nodeFs,
  openPolicyFile,
  POLICY_READS_IN_FLIGHT,
  sameGlobLook,
  whereNow,
  type GlobLook,
  type LoadedSources,
  type PolicyFileRead,
} from '../policies/index.js';
import { linksToward } from './watch-links.js';
import type { PolicyDir } from './watch-list.js';

/** The hash of a file that does not exist (or cannot be read): a state of its own. */
export const MISSING = 'missing';

/**
 * How one read of a policy file stands in a fingerprint: its bytes' sha256, where the file
 * opened was (the same bytes through a link out of an include's directory are another file: the
 * load refuses it) and which file it was (a load knows files by device and inode: a hard link
 * of another include put in its place is that file, loaded once), or why it could not be read.
 * The watcher's reads and the state's loads are both keyed by this, so that they compare.
 */
export function readKey(outcome: { read: PolicyFileRead } | { error: unknown }): string {
  if ('read' in outcome) {
    const { bytes, real, id } = outcome.read;
    return `${fileHash(bytes)}@${real}#${id}`;
  }
  const code = errnoCode(outcome.error);
  return code === 'ENOENT' || code === 'ENOTDIR'
    ? MISSING
    : `unreadable:${code ?? String(outcome.error)}`;
}

/** The file's `readKey` as it is now. `reads`, if given, keeps what was read, by name. */
export async function hashFile(file: string, reads?: Map<string, PolicyFileRead>): Promise<string> {
  try {
    const read = await openPolicyFile(file);
    reads?.set(file, read);
    return readKey({ read });
  } catch (error) {
    return readKey({ error });
  }
}

/** Every file of a group as it is on disk now: path to hash, in path order. */
export type Fingerprint = Map<string, string>;

/**
 * What one load of a group looked at (state.ts `lastLook`): each file it read, by `readKey`;
 * each include glob as it found it (`GlobLook`); and the paths it went by without reading
 * (`LoadedSources.located`). A load's outcome depends on nothing else, so a load now would do
 * the same if these are the same on disk.
 */
export interface LoadLook {
  files: ReadonlyMap<string, string>;
  globs: readonly GlobLook[];
  located: LoadedSources['located'];
}

/**
 * Hash `files` as they are now, a few at a time. `files` are what a load read, within the caps
 * on what one policy may hold (policies/policy-caps.ts); they may have grown since, so the bytes
 * are read, in path order, only while their sizes (by `stat`) stay within the bytes a load may
 * read (MAX_POLICY_TOTAL_BYTES and the file that passed it); the rest stand by size, change time
 * and inode, which an edit changes too. A file over the size of one policy file is not read at
 * all (the open refuses it). `reads`, if given, keeps the bytes read, by name, for the reload
 * that may follow (policies/fs.ts `withReads`).
 */
export async function fingerprint(
  files: Iterable<string>,
  reads?: Map<string, PolicyFileRead>,
): Promise<Fingerprint> {
  const sorted = [...new Set(files)].sort();
  const sizes = await mapBounded(sorted, POLICY_READS_IN_FLIGHT, statKey);
  let budget = MAX_POLICY_TOTAL_BYTES + MAX_POLICY_BYTES;
  const read = sizes.map((st) => {
    // Missing, unreadable or over one file's size: the open says which, reading nothing.
    if (st === undefined || st.size > MAX_POLICY_BYTES) return true;
    budget -= st.size;
    return budget >= 0;
  });
  const hashes = await mapBounded(sorted, POLICY_READS_IN_FLIGHT, (f, i) =>
    read[i] ? hashFile(f, reads) : Promise.resolve(`over-cap:${sizes[i]!.key}`),
  );
  return new Map(sorted.map((f, i) => [f, hashes[i]!]));
}

/** Whether an include glob would be found otherwise now than a load found it (`look`). */
export async function globMoved(look: GlobLook): Promise<boolean> {
  return !sameGlobLook(look, await lookAtGlob(limitFs(nodeFs()), look.pattern));
}

/** Whether a path a load went by without reading it leads elsewhere now. */
export async function relocated(path: LoadedSources['located'][number]): Promise<boolean> {
  return (await whereNow(nodeFs(), path.path)) !== path.where;
}

/** A file's size, and a key that changes when it is written: size, change time, inode. */
async function statKey(file: string): Promise<{ size: number; key: string } | undefined> {
  try {
    const st = await stat(file, { bigint: true });
    return { size: Number(st.size), key: `${st.size}:${st.ctimeNs}:${st.mtimeNs}:${st.ino}` };
  } catch {
    return undefined;
  }
}

/** Files present in `before` that are missing in `after` (an editor's delete-then-write in progress?). */
export function vanished(before: Fingerprint | undefined, after: Fingerprint): boolean {
  if (!before) return false;
  for (const [f, h] of before)
    if (h !== MISSING && (after.get(f) ?? MISSING) === MISSING) return true;
  return false;
}

/**
 * Directories to watch for a set of policy files: each one's directory and, for a symlink, its
 * target's; and the directory holding each link on the way to a file or an include's
 * directory (watch-links.ts).
 */
export async function policyDirs(
  files: string[],
  includeDirs: string[],
): Promise<{ watch: PolicyDir[]; wanted: string[]; names: string[] }> {
  const wanted = new Set<string>();
  const names = new Set<string>(files);
  for (const f of files) {
    wanted.add(dirname(f));
    const real = await leadsTo(f);
    names.add(real);
    wanted.add(dirname(real));
  }
  const watch = new Set<string>(includeDirs);
  for (const d of wanted) watch.add(await nearestExisting(nodeFs(), d));
  const toward = await linksToward([...files, ...includeDirs]);
  for (const d of toward.holders) watch.add(d);
  // A link on the way re-pointed (the middle one of `main -> mid -> real`) is an event of its
  // own name only, in the directory holding it: a policy file's name too.
  for (const link of toward.links) names.add(link);
  return { watch: await locate([...watch]), wanted: [...wanted], names: [...names] };
}

/**
 * Where a path leads now: for a missing one behind a link (a dotfiles link whose target was
 * removed, or its directory renamed away), where the link says, so that the target's coming back
 * is watched for. The link's own directory alone saw nothing of it until the rescan.
 */
export function leadsTo(path: string): Promise<string> {
  return realpath(path).catch(() => canonicalizeLoose(nodeFs(), path).catch(() => path));
}

/** Each directory with where its name leads now (`PolicyDir`). */
export function locate(dirs: string[]): Promise<PolicyDir[]> {
  return Promise.all(
    dirs.map(async (path) => ({ path, real: await realpath(path).catch(() => undefined) })),
  );
}
