/**
 * The state directory holds the grants file, which is policy: whoever can write it gives every
 * server any path. A directory another local user made first (a `--state-dir` under `/tmp`) or
 * can write, or a grants file of theirs in it, would be such a writer, so the daemon refuses to
 * start on one, as it refuses such a socket directory (protocol/socket-path.ts).
 */
import type { Stats } from 'node:fs';
import { lstat, mkdir, realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errnoCode, ignoreMissing, RootsError } from '../common/errors.js';
import { grantsFile } from '../common/locations.js';
import { checkOwned } from '../protocol/owned-path.js';

/** Create `dir` (mode 0700, with parents) if needed; refuse it, or its grants file, unless safe. */
export async function ensureStateDir(dir: string, uid: number): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    // Something that is not a directory is in the way: lstat below says what it is.
    if (errnoCode(err) !== 'EEXIST') {
      throw new RootsError(
        'STATE_DIR_UNSAFE',
        `cannot create the state directory ${dir} (${errnoCode(err) ?? String(err)}). Choose another --state-dir.`,
        { cause: err },
      );
    }
  }
  check(dir, 'directory', await lstat(dir), uid);
  await checkAncestors(dir, uid);
  const grants = grantsFile(dir);
  const st = await ignoreMissing(lstat(grants));
  if (st !== undefined) check(grants, 'file', st, uid);
}

/**
 * Whoever may rename entries in a directory above the state directory can move it away and put
 * their own in its place, grants file and all, while the daemon runs. So each directory above it
 * (where its name leads) must be the user's own or root's, and not writable by others unless
 * sticky, as `/tmp` is (there only an entry's owner may rename it). A group-writable one passes:
 * on systems with a group per user that is the user's own group.
 */
async function checkAncestors(dir: string, uid: number): Promise<void> {
  let at = dirname(await realpath(dir));
  for (;;) {
    const st = await lstat(at);
    const sticky = (st.mode & 0o1000) !== 0;
    const what =
      st.uid !== uid && st.uid !== 0
        ? `is owned by uid ${st.uid}, not by you (uid ${uid}) or root`
        : (st.mode & 0o002) !== 0 && !sticky
          ? `has mode ${(st.mode & 0o7777).toString(8).padStart(4, '0')}: others may write it, and it has no sticky bit`
          : undefined;
    if (what !== undefined) {
      throw new RootsError(
        'STATE_DIR_UNSAFE',
        `the state directory ${dir} is unsafe: ${at}, a directory above it, ${what}, so another local user could put a state directory of their own, grants and all, in its place. Choose a --state-dir in a directory of your own.`,
      );
    }
    if (dirname(at) === at) return;
    at = dirname(at);
  }
}

function check(path: string, kind: 'file' | 'directory', st: Stats, uid: number): void {
  checkOwned(path, st, uid, {
    kind,
    chmod: 'go-w',
    unsafe: (what, fix) =>
      new RootsError(
        'STATE_DIR_UNSAFE',
        `the ${kind === 'file' ? 'grants file' : 'state directory'} ${path} is unsafe: ${what}, so another local user could grant servers any path. ${fix}, or choose another --state-dir.`,
        { hint: fix },
      ),
  });
}
