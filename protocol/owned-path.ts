/**
 * The one check for the paths that decide which daemon a client talks to (the socket directory,
 * the state directory, the socket pointer): another local user who could replace or write one of
 * them could plant a fake daemon, so each must be the user's own and writable by nobody else.
 */
import type { Stats } from 'node:fs';
import type { RootsError } from '../common/errors.js';
import { shellQuote } from '../common/shell-quote.js';

export interface OwnedPathCheck {
  /** What the path must be. */
  kind: 'file' | 'directory';
  /** The refusal, worded for this path: what is wrong, and the fix. */
  unsafe: (what: string, fix: string) => RootsError;
  /** The `chmod` mode that repairs group or world write access (`700`, `go-w`). */
  chmod: string;
  /**
   * The fix for a shared directory (the sticky bit set, as on `/tmp`), which is never to be
   * removed or made private: a directory of one's own inside it.
   */
  shared?: string;
}

/** Throw `check.unsafe(...)` unless `st` (from lstat) is a `kind` owned by `uid` and writable by nobody else. */
export function checkOwned(path: string, st: Stats, uid: number, check: OwnedPathCheck): void {
  const q = shellQuote(path);
  const { kind, unsafe } = check;
  if (st.isSymbolicLink()) {
    throw unsafe(`it is a symbolic link, not a ${kind}`, `Remove it (rm ${q})`);
  }
  if (kind === 'file' ? !st.isFile() : !st.isDirectory()) {
    throw unsafe(`it is not a ${kind}`, `Remove it (rm ${kind === 'file' ? '-r ' : ''}${q})`);
  }
  const mode = st.mode & 0o7777;
  const shared = (mode & 0o1000) !== 0 ? check.shared : undefined;
  if (st.uid !== uid) {
    throw unsafe(
      `it is owned by uid ${st.uid}, not by you (uid ${uid})`,
      shared ?? `Remove it as its owner (rm -r ${q})`,
    );
  }
  if ((mode & 0o022) !== 0) {
    throw unsafe(
      `its mode is ${mode.toString(8).padStart(4, '0')}, writable by group or others`,
      shared ?? `Run \`chmod ${check.chmod} ${q}\``,
    );
  }
}
