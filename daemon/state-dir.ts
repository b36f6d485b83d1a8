/**
 * The state directory holds the grants file, which is policy: whoever can write it gives every
 * server any path. A directory another local user made first (a `--state-dir` under `/tmp`) or
 * can write, or a grants file of theirs in it, would be such a writer, so the daemon refuses to
 * start on one, as it refuses such a socket directory (protocol/socket-path.ts). And it keeps to
 * the directory it checked: by its canonical path (a link on the way, re-pointed later, leads
 * nowhere new), and by its identity (one removed and made again by someone else is not it).
 */
import type { Stats } from 'node:fs';
import { lstat, mkdir, realpath } from 'node:fs/promises';
import { dirname } from 'node:path';
import { errnoCode, ignoreMissing, RootsError } from '../common/errors.js';
import { grantsFile } from '../common/locations.js';
import { checkOwned } from '../protocol/owned-path.js';
import { privateGroup } from './private-group.js';

/** The state directory the daemon checked at start. */
export interface StateDir {
  /** Its canonical path then: every file in it is reached by this name. */
  readonly path: string;
  /**
   * Throw (`STATE_DIR_UNSAFE`) unless the directory at `path` is still the one checked, still
   * the user's alone, and its grants file (if any) is a regular file of theirs that nobody else
   * can write. Called before each read and write of the grants file.
   */
  readonly verify: () => Promise<void>;
}

/** Create `dir` (mode 0700, with parents) if needed; refuse it, or its grants file, unless safe. */
export async function ensureStateDir(dir: string, uid: number, pid: number): Promise<StateDir> {
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
  const first = await lstat(dir);
  check(dir, 'directory', first, uid);
  const path = await realpath(dir);
  await checkAncestors(dir, path, uid);
  const verify = async (): Promise<void> => {
    const now = await ignoreMissing(lstat(path));
    // An inode number is reused at once for a directory made after one was removed; its birth
    // time (where the file system keeps one) is not.
    if (
      now === undefined ||
      now.dev !== first.dev ||
      now.ino !== first.ino ||
      now.birthtimeMs !== first.birthtimeMs
    ) {
      throw new RootsError(
        'STATE_DIR_UNSAFE',
        `the state directory ${path} is not the one the daemon started on (it was ${now === undefined ? 'removed' : 'replaced'}), so neither its grants nor its decision log are used. Restart mcp-rootsd (pid ${pid}) to check and use the directory there now: \`systemctl --user restart mcp-rootsd\` where systemd runs it, else stop it and start it again as before.`,
      );
    }
    check(path, 'directory', now, uid);
    const grants = await ignoreMissing(lstat(grantsFile(path)));
    if (grants !== undefined) check(grantsFile(path), 'file', grants, uid);
  };
  await verify();
  return { path, verify };
}

/**
 * Whoever may rename entries in a directory above the state directory can move it away and put
 * their own in its place, grants file and all, while the daemon runs. So each directory above it
 * (where its name leads) must be the user's own or root's, and writable by nobody else: not by
 * others unless sticky, as `/tmp` is (there only an entry's owner may rename it), and by its group
 * only when that group is the user's private group (no one else is in it).
 */
async function checkAncestors(dir: string, canonical: string, uid: number): Promise<void> {
  for (let at = dirname(canonical); ; at = dirname(at)) {
    const st = await lstat(at);
    const sticky = (st.mode & 0o1000) !== 0;
    const mode = (st.mode & 0o7777).toString(8).padStart(4, '0');
    const what =
      st.uid !== uid && st.uid !== 0
        ? `is owned by uid ${st.uid}, not by you (uid ${uid}) or root`
        : (st.mode & 0o002) !== 0 && !sticky
          ? `has mode ${mode}: others may write it, and it has no sticky bit`
          : (st.mode & 0o020) !== 0 && !sticky && !(await privateGroup(st.gid, uid))
            ? `has mode ${mode}: group ${st.gid}, which is not yours alone, may write it`
            : undefined;
    if (what !== undefined) {
      throw new RootsError(
        'STATE_DIR_UNSAFE',
        `the state directory ${dir} is unsafe: ${at}, a directory above it, ${what}, so another local user could put a state directory of their own, grants and all, in its place. Choose a --state-dir in a directory of your own.`,
      );
    }
    if (dirname(at) === at) return;
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
