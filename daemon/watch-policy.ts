/** Which files make up the policy on disk, and a fingerprint of their bytes to tell a real edit from noise. */
import { realpath, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errnoCode } from '../common/errors.js';
import {
  expandGlob,
  fileHash,
  limitFs,
  nearestExisting,
  mapBounded,
  MAX_POLICY_BYTES,
  MAX_POLICY_FILES,
  MAX_POLICY_TOTAL_BYTES,
  nodeFs,
  openPolicyFile,
  POLICY_READS_IN_FLIGHT,
  type PolicyFileRead,
} from '../policies/index.js';

/** The hash of a file that does not exist (or cannot be read): a state of its own. */
export const MISSING = 'missing';

/**
 * How one read of a policy file stands in a fingerprint: its bytes' sha256 and where the file
 * opened was (the same bytes through a link out of an include's directory are another file: the
 * load refuses it), or why it could not be read. The watcher's reads and the state's loads are
 * both keyed by this, so that they compare.
 */
export function readKey(outcome: { read: PolicyFileRead } | { error: unknown }): string {
  if ('read' in outcome) return `${fileHash(outcome.read.bytes)}@${outcome.read.real}`;
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
 * Hash `files` plus every file the include globs match now, within the caps on what one policy
 * may hold (policies/policy-caps.ts), a few at a time. Past the caps, where the load will refuse
 * the policy anyway, a file is not read: the files given (those the policy loaded, and the grants
 * file) and then the globs' other matches in path order are looked at up to MAX_POLICY_FILES (and
 * the grants file), the rest stand by name alone; of those, the bytes are read in that order
 * while their sizes (by `stat`) stay within MAX_POLICY_TOTAL_BYTES (and the grants file's own
 * size), the rest stand by size, change time and inode, which an edit changes too. `reads`, if
 * given, keeps the bytes read, by name, for the reload that may follow (policies/fs.ts
 * `withReads`).
 */
export async function fingerprint(
  files: string[],
  includeGlobs: string[],
  reads?: Map<string, PolicyFileRead>,
): Promise<Fingerprint> {
  const all = new Set(files);
  const fs = limitFs(nodeFs());
  for (const pattern of includeGlobs) {
    for (const m of (await expandGlob(fs, pattern, 'file')).matches) all.add(m.path);
  }
  // The files the policy loaded (and the grants file) first, then the globs' other matches.
  const knownSet = new Set(files);
  const known = [...knownSet].sort();
  const matched = [...all].filter((f) => !knownSet.has(f)).sort();
  const looked = [...known, ...matched].slice(0, Math.max(known.length, MAX_POLICY_FILES + 1));
  const sizes = await mapBounded(looked, POLICY_READS_IN_FLIGHT, statKey);
  let budget = MAX_POLICY_TOTAL_BYTES + MAX_POLICY_BYTES;
  const read = sizes.map((st) => {
    if (st === undefined) return true; // missing or unreadable: hashFile says which
    budget -= st.size;
    return budget >= 0;
  });
  const hashes = await mapBounded(looked, POLICY_READS_IN_FLIGHT, (f, i) =>
    read[i] ? hashFile(f, reads) : Promise.resolve(`over-cap:${sizes[i]!.key}`),
  );
  const byFile = new Map(looked.map((f, i) => [f, hashes[i]!]));
  return new Map([...all].sort().map((f) => [f, byFile.get(f) ?? OVER_CAP]));
}

/** A file past the cap on the number of files: it stands by its name alone. */
export const OVER_CAP = 'over-cap';

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

/** Directories to watch for a set of policy files: each one's directory and, for a symlink, its target's. */
export async function policyDirs(
  files: string[],
  includeDirs: string[],
): Promise<{ watch: string[]; wanted: string[]; names: string[] }> {
  const wanted = new Set<string>();
  const names = new Set<string>(files);
  for (const f of files) {
    wanted.add(dirname(f));
    try {
      const real = await realpath(f);
      names.add(real);
      wanted.add(dirname(real));
    } catch {
      // a missing file: its own directory is enough
    }
  }
  const watch = new Set<string>(includeDirs);
  for (const d of wanted) watch.add(await nearestExisting(nodeFs(), d));
  return { watch: [...watch], wanted: [...wanted], names: [...names] };
}
