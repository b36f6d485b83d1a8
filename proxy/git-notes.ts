/**
 * Which git directories in a sandboxed server's writable roots are the person's, and which of
 * git's code entries (`config`, `config.worktree`, `hooks`, `commondir`) each held, so that the
 * deny watch (deny-watch.ts) can tell a code entry the server planted from one that was there.
 * The sandbox makes existing code entries read-only, but a missing one has no mount, and git
 * outside the sandbox runs what it says on the person's next `git status` (git-plant.ts moves
 * such entries aside). Three rules, for as long as the proxy runs:
 *
 * - **Noted directories.** Every git directory the first walk of the roots finds (before any
 *   server ran) is noted with its code entries; so is one that becomes complete later (`HEAD`,
 *   `objects` or `refs`, and `config`: a clone the person makes), as it stands then. A code
 *   entry a noted directory did not hold is the server's, found by its event or by any later
 *   walk (one after a flood of events lost some).
 * - **Git directories inside the person's repositories.** A new `.git` directory in a noted
 *   repository's work tree, or a new git directory below a noted one's `modules/`, makes git in
 *   that repository run what it says, once the server stages it (a gitlink in the index, which
 *   is not a code entry and stays writable): every code entry in it is the server's.
 * - **Anything else is new and its own.** A repository made elsewhere is the server's whole (the
 *   person runs git in it only by choice); docs/security.md says so.
 */
import { lstatSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import {
  GIT_DIR_CODE,
  GIT_DIR_SHAPE,
  isGitCodeName,
  isGitDirShape,
} from '../common/protected-patterns.js';
import { inside } from './sandbox-paths.js';

/** A git directory as noted: its identity (device and inode) and the code entries it held. */
interface Noted {
  identity: string;
  code: ReadonlySet<string>;
}

/** The names a git directory's shape and code are read from. */
const NAMES: ReadonlySet<string> = new Set<string>([...GIT_DIR_SHAPE, ...GIT_DIR_CODE]);

/** Which of `NAMES` `dir` holds now, as any kind of entry (a link too). */
function namesIn(dir: string): Set<string> {
  const found = new Set<string>();
  for (const n of NAMES) if (lstatSync(join(dir, n), { throwIfNoEntry: false })) found.add(n);
  return found;
}

/** The code entries among `names`, as paths in `dir`. */
const codeIn = (dir: string, names: ReadonlySet<string>, except?: ReadonlySet<string>): string[] =>
  GIT_DIR_CODE.filter((n) => names.has(n) && !except?.has(n)).map((n) => join(dir, n));

export class GitNotes {
  private readonly noted = new Map<string, Noted>();
  /** Set once the first walk of the roots has ended: what it found was there before any server. */
  private first = true;

  /** The first walk of the roots has ended. */
  firstWalkDone(): void {
    this.first = false;
  }

  /**
   * A walk read `dir` (identity `id`), holding `names`: the code entries in it that are the
   * server's (to move aside), after noting `dir` if it is a git directory to note.
   */
  walked(dir: string, id: string, names: ReadonlySet<string>): string[] {
    const noted = this.noted.get(dir);
    if (noted?.identity === id) return codeIn(dir, names, noted.code);
    // Most directories are neither a git directory nor a `.git`: nothing more to look at.
    if (basename(dir) !== '.git' && !isGitDirShape(names)) return [];
    if (this.insidePersons(dir, names)) return codeIn(dir, names);
    if (isGitDirShape(names) && (this.first || names.has('config'))) this.note(dir, id, names);
    return [];
  }

  /**
   * `path` appeared in a watched directory whose identity is `dirId`: the code entries that are
   * the server's, now that it is there (itself, or every one of a git directory it completed
   * inside the person's repository), after noting a git directory it completed elsewhere.
   */
  appeared(path: string, dirId: string | undefined): string[] {
    const name = basename(path);
    if (!NAMES.has(name) || dirId === undefined) return [];
    const dir = dirname(path);
    const noted = this.noted.get(dir);
    if (noted?.identity === dirId)
      return isGitCodeName(name) && !noted.code.has(name) ? [path] : [];
    return this.walked(dir, dirId, namesIn(dir));
  }

  private note(dir: string, id: string, names: ReadonlySet<string>): void {
    this.noted.set(dir, {
      identity: id,
      code: new Set(GIT_DIR_CODE.filter((n) => names.has(n))),
    });
  }

  /**
   * Whether `dir`, not noted, is a git directory (or a `.git` that could become one) inside a
   * noted repository: a `.git` in its work tree, or a git directory below its `modules/`. Not
   * one below `worktrees/` (a linked worktree's, which only its own `.git` file leads to).
   */
  private insidePersons(dir: string, names: ReadonlySet<string>): boolean {
    if (this.first) return false;
    for (const d of this.noted.keys()) {
      if (d === dir) continue;
      if (basename(dir) === '.git' && basename(d) === '.git' && inside(dir, dirname(d)))
        return true;
      if (inside(dir, join(d, 'modules')) && isGitDirShape(names)) return true;
    }
    return false;
  }
}
