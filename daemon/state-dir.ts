/**
 * The state directory holds the grants file, which is policy: whoever can write it gives every
 * server any path. A directory another local user made first (a `--state-dir` under `/tmp`) or
 * can write, or a grants file of theirs in it, would be such a writer, so the daemon refuses to
 * start on one, as it refuses such a socket directory (protocol/socket-path.ts).
 */
import type { Stats } from 'node:fs';
import { lstat, mkdir } from 'node:fs/promises';
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
  const grants = grantsFile(dir);
  const st = await ignoreMissing(lstat(grants));
  if (st !== undefined) check(grants, 'file', st, uid);
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
