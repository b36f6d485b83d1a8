/** Which files make up the policy on disk, and a fingerprint of their bytes to tell a real edit from noise. */
import { realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errnoCode } from '../common/errors.js';
import {
  expandGlob,
  fileHash,
  nearestExisting,
  nodeFs,
  readPolicyFile,
} from '../policies/index.js';

/** The hash of a file that does not exist (or cannot be read): a state of its own. */
export const MISSING = 'missing';

/** sha256 of the file's bytes, or MISSING. */
export async function hashFile(file: string): Promise<string> {
  try {
    return fileHash(await readPolicyFile(file));
  } catch (err) {
    const code = errnoCode(err);
    return code === 'ENOENT' || code === 'ENOTDIR' ? MISSING : `unreadable:${code ?? String(err)}`;
  }
}

/** Every file of a group as it is on disk now: path to hash, in path order. */
export type Fingerprint = Map<string, string>;

/** Hash `files` plus every file the include globs match now. */
export async function fingerprint(files: string[], includeGlobs: string[]): Promise<Fingerprint> {
  const all = new Set(files);
  const fs = nodeFs();
  for (const pattern of includeGlobs) {
    for (const m of (await expandGlob(fs, pattern, 'file')).matches) all.add(m.path);
  }
  const sorted = [...all].sort();
  const hashes = await Promise.all(sorted.map(hashFile));
  return new Map(sorted.map((f, i) => [f, hashes[i]!]));
}

/** The fingerprint as one comparable string. */
export function printKey(print: Fingerprint): string {
  return [...print].map(([f, h]) => `${f}\0${h}`).join('\n');
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
