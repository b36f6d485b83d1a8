/**
 * Which git directories in a sandboxed server's writable roots are the person's, and which of
 * git's code entries (`config`, `config.worktree`, `hooks`, `commondir`) each held, so that the
 * deny watch (deny-watch.ts) can tell a code entry the server planted from one that was there.
 * The sandbox makes existing code entries read-only, but a missing one has no mount, and git
 * outside the sandbox runs what it says on the person's next `git status` (git-plant.ts moves
 * such entries aside). Three rules, for as long as the proxy runs:
 *
 * - **Noted directories.** Every git directory the first walk of a root finds (before any server
 *   ran; for a root added later, before any instance of the server had it) is noted with its code
 *   entries, as the person's; so is one that becomes complete later (`HEAD`,
 *   `objects` or `refs`, and `config`: a clone the person makes), as it stands then. A noted
 *   directory is known by its identity wherever it is renamed to. A code entry it does not hold
 *   is the server's, found by its event or by any later walk (one after a flood of events lost
 *   some).
 * - **Git directories inside, above, or in place of the person's repositories** (those the
 *   first walk found, and those whose `.git` lies above a root: the whole root is their work
 *   tree, and git run in it finds what is made there first). A new `.git` directory in one's
 *   work tree, or a new git directory below
 *   its `modules/`, makes git there run what it says once the server stages it (a gitlink in the
 *   index, which is not a code entry and stays writable); a new bare git directory in its work
 *   tree is what git run there or below finds first; a new `.git` in a directory holding
 *   its work tree, or a bare git directory holding it, is what git finds once the server renamed
 *   the repository's `HEAD` away (git looks upward); one standing where one of them stood is not
 *   it. Every code entry in such a directory is the server's, and so is a new `.git` that is not
 *   a directory (a file naming a git directory elsewhere, or a link to one) in such a place. A
 *   directory noted during the session and renamed into such a place is the server's too: its
 *   notes are of what it held when it was made, by whoever made it. A work tree is one whose
 *   `.git` directory was noted at the start, one whose `.git` file or link the first walk found
 *   (a linked worktree, a submodule's checkout), or one holding a root.
 * - **Two of the start's brought together by a rename.** The first walk cannot tell a repository
 *   the server made in an earlier session from the person's: one renamed below another that was
 *   not above it at the start, or to where another stood, has its code handed on (`moved`); so
 *   has a `.git` file or link of the start carried below another (`pointerMoved`).
 * - **Links naming a repository.** A link the first walk finds that leads to a repository
 *   (`proj -> real`) is how the person reaches it: another link put in its place, or a
 *   repository made there, is the server's (`linkAt`, and `places`). So is any link put later
 *   where one of the person's repositories stood or on the way there: git follows it.
 * - **Anything else is new and its own.** A repository made elsewhere is the server's whole (the
 *   person runs git in it only by choice); docs/security.md says so.
 */
import { lstatOrNone } from '../common/errors.js';
import { realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import {
  GIT_DIR_CODE,
  GIT_DIR_SHAPE,
  isGitCodeName,
  isGitDirShape,
} from '../common/protected-patterns.js';
import { inside } from './sandbox-paths.js';

/**
 * A git directory as noted (by its identity, device and inode, which a rename keeps): where it is
 * now, and the code entries it holds that are the person's (one that goes away is no longer
 * theirs, should it come back).
 */
interface Noted {
  path: string;
  code: Set<string>;
  /** Found by the first walk, before any server ran: the person's beyond doubt. */
  fromStart: boolean;
  /**
   * Noted at the start: the identities of the git directories and `.git` pointers above it (in
   * the roots) then, which git would find from it once its own could not be read. A session's
   * first walk cannot tell one the server made in an earlier session from the person's, so one
   * that holds it after a rename, and did not before, is the server's.
   */
  above?: Set<string>;
}

/** The names a git directory's shape and code are read from. */
const NAMES: ReadonlySet<string> = new Set<string>([...GIT_DIR_SHAPE, ...GIT_DIR_CODE]);

/** Which of `NAMES` `dir` holds now, as any kind of entry (a link too). */
function namesIn(dir: string): Set<string> {
  const found = new Set<string>();
  for (const n of NAMES) if (lstatOrNone(join(dir, n))) found.add(n);
  return found;
}

/** The code entries among `names`, as paths in `dir`. */
const codeIn = (dir: string, names: ReadonlySet<string>, except?: ReadonlySet<string>): string[] =>
  GIT_DIR_CODE.filter((n) => names.has(n) && !except?.has(n)).map((n) => join(dir, n));

/**
 * The code entries among `names` in `dir` that are files with another name too (a hard link): a
 * server made the link while a replaced entry's read-only mount was gone (the person's `git
 * config` renames a new file over `config`), and writes through it once the mount is back. Git
 * never links these.
 */
function linkedCode(dir: string, names: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const n of GIT_DIR_CODE) {
    if (!names.has(n)) continue;
    const st = lstatOrNone(join(dir, n));
    if (st?.isFile() === true && st.nlink > 1) out.push(join(dir, n));
  }
  return out;
}

/** Where git is run to find the git directory `dir`: a `.git`'s parent, a bare one itself. */
const placeOf = (dir: string): string => (basename(dir) === '.git' ? dirname(dir) : dir);

/** Whether the link `path` leads to a repository: a directory holding a `.git`, or a bare one. */
function namesRepository(path: string): boolean {
  let target: string;
  try {
    target = realpathSync(path);
  } catch {
    return false;
  }
  return lstatOrNone(join(target, '.git')) !== undefined || isGitDirShape(namesIn(target));
}

/** A `.git` that is not a directory (a file or a link), by its identity, when it is one. */
function pointerIdentity(path: string): string | undefined {
  const st = lstatOrNone(path);
  return st === undefined || st.isDirectory() ? undefined : `${st.dev}:${st.ino}`;
}

export class GitNotes {
  /** The noted git directories, by identity. */
  private readonly noted = new Map<string, Noted>();
  /**
   * Every place a repository of the start has stood at, with the first one's identity: the
   * directory git is run in to find it (a `.git` directory's or `.git` file's parent, a bare
   * one itself), so that one put where another stood is known whatever its shape.
   */
  private readonly places = new Map<string, string>();
  /**
   * The links the first walk found that name a repository (`proj -> real`, the person reaching
   * one by that name), by where each stands, with its identity: whatever reads the name follows
   * the link, so another link in its place (re-pointed at a repository of the server's) is the
   * server's (`linkAt`), and so is a git directory standing there (`places`).
   */
  private readonly repoLinks = new Map<string, string>();
  /**
   * The `.git` files and links the first walk found (submodules, worktrees), by identity: where
   * each stands now, and the git directories and pointers above it at the start (as
   * `Noted.above`), so that one carried below another by a rename is judged as `moved` judges.
   */
  private readonly pointers = new Map<string, { path: string; above: Set<string> }>();
  /** The roots every earlier walk covered: the server may have written what lies in them. */
  private readonly seen: string[] = [];
  /** The roots of the walk under way, while it lasts. */
  private walking: readonly string[] | undefined;
  /**
   * The work trees of the person's repositories that hold a root (their `.git` above it, out of
   * the server's reach): git run anywhere in the root finds a git directory made there first.
   */
  private readonly outerTrees = new Set<string>();

  /**
   * A walk of `roots` begins. What it finds in a root no earlier walk covered (the first walk's,
   * before any server ran, or a root added since, which no instance of the server had) is the
   * person's; so is every repository whose `.git` lies above such a root.
   */
  walkBegins(roots: readonly string[]): void {
    this.walking = roots;
    for (const root of roots) {
      if (!this.fresh(root)) continue;
      for (let dir = dirname(root); ; dir = dirname(dir)) {
        if (lstatOrNone(join(dir, '.git'))) this.outerTrees.add(dir);
        if (dir === dirname(dir)) break;
      }
    }
  }

  /** The walk that `walkBegins` began has ended. */
  walkEnded(): void {
    for (const root of this.walking ?? []) if (this.fresh(root)) this.seen.push(root);
    this.walking = undefined;
  }

  /** Whether `path` is being walked for the first time, in a root no earlier walk covered. */
  private fresh(path: string): boolean {
    return this.walking !== undefined && !this.seen.some((root) => inside(path, root));
  }

  /**
   * A walk read `dir` (identity `id`), holding `names`: the entries in it that are the server's,
   * to move aside (code entries, and a `.git` that is not a directory), after noting `dir` if it
   * is a git directory to note.
   */
  walked(dir: string, id: string, names: ReadonlySet<string>): string[] {
    const pointer = names.has('.git') ? this.newPointer(join(dir, '.git')) : [];
    return [...pointer, ...this.walkedGitDir(dir, id, names)];
  }

  /**
   * `path` appeared in a watched directory whose identity is `dirId`: the entries that are the
   * server's, now that it is there (itself, or every code entry of a git directory it completed
   * inside the person's repository), after noting a git directory it completed elsewhere.
   */
  appeared(path: string, dirId: string | undefined): string[] {
    const name = basename(path);
    if (dirId === undefined) return [];
    if (name === '.git') return this.newPointer(path);
    if (!NAMES.has(name)) return [];
    const known = this.noted.get(dirId);
    if (known?.fromStart === true) {
      const above = this.moved(known, dirId, dirname(path));
      const planted = isGitCodeName(name) && !known.code.has(name);
      return [...(planted ? [path] : []), ...above];
    }
    return this.walkedGitDir(dirname(path), dirId, namesIn(dirname(path)));
  }

  /**
   * Whether `path`, in the directory whose identity is `dirId`, is a code entry of the person's
   * (a git directory noted at the start, whose code the sandbox's layout made read-only) held
   * then and holding again: replaced, as `git config` does. Not one of a repository made during
   * the session: `git init` and `git clone` write their `config` by a rename too.
   */
  held(path: string, dirId: string | undefined): boolean {
    if (dirId === undefined) return false;
    const known = this.noted.get(dirId);
    return known?.fromStart === true && known.code.has(basename(path));
  }

  /** `path` went away from the directory whose identity is `dirId`. */
  vanished(path: string, dirId: string | undefined): void {
    if (dirId !== undefined) this.noted.get(dirId)?.code.delete(basename(path));
  }

  private walkedGitDir(dir: string, id: string, names: ReadonlySet<string>): string[] {
    const known = this.noted.get(id);
    if (known?.fromStart === true) {
      const planted = codeIn(dir, names, known.code);
      const linked = linkedCode(dir, names).filter((p) => !planted.includes(p));
      return [...planted, ...linked, ...this.moved(known, id, dir)];
    }
    if (known !== undefined) known.path = dir;
    // Most directories are neither a git directory nor a `.git`: nothing more to look at.
    if (known === undefined && basename(dir) !== '.git' && !isGitDirShape(names)) return [];
    // One standing where the person's stood, but not it (that one was moved away or removed),
    // one inside the person's repository, or one git would find from it: the server's. So is
    // one noted elsewhere during the session and renamed to such a place since: its notes say
    // only what it held when it was made, by whoever made it.
    if (
      this.places.has(placeOf(dir)) ||
      this.insidePersons(dir, names) ||
      this.coversPersons(dir)
    ) {
      if (known !== undefined) this.noted.delete(id);
      return codeIn(dir, names);
    }
    if (known !== undefined) return codeIn(dir, names, known.code);
    if (isGitDirShape(names) && (this.fresh(dir) || names.has('config'))) {
      this.note(dir, id, names);
      return linkedCode(dir, names);
    }
    return [];
  }

  /**
   * The git directory `known` (identity `id`), noted at the start, is at `dir` now. A session's
   * first walk cannot tell a repository the server made in an earlier session from the
   * person's. Put below a git directory (or `.git` file or link) that was not above it at the
   * start, the upper one's code is the server's: git finds it once the lower one's own cannot be
   * read (its `HEAD` renamed away). So is the lower one's, unless the upper was made during the
   * session (then that one is the server's, and the lower the person's): git run in the upper's
   * work tree enters the lower behind a gitlink. Put where another of the start's stood (moved
   * away first), its own code is the server's: the person's next `git status` there runs it.
   */
  private moved(known: Noted, id: string, dir: string): string[] {
    if (known.path === dir) return [];
    known.path = dir;
    const stood = this.places.get(placeOf(dir));
    if (stood === undefined) this.places.set(placeOf(dir), id);
    const out: string[] = [];
    let own = stood !== undefined && stood !== id;
    for (const g of this.gitAbove(dir)) {
      if (known.above?.has(g.id) === true) continue;
      out.push(...(g.pointer ? [g.path] : codeIn(g.path, namesIn(g.path))));
      // The upper is of the start too: which of the two is the person's cannot be told. One
      // made during the session is the server's, noted yet or not (its events may still be on
      // their way when the rename that brought the two together is seen).
      if (this.ofStart(g)) own = true;
    }
    if (own) out.push(...codeIn(dir, namesIn(dir)));
    return out;
  }

  /**
   * The `.git` file or link of the start `id` is at `path` now: judged as `moved` judges a git
   * directory. Carried (in the directory that holds it) below a repository that was not above
   * it at the start, the upper one's code is handed on, and the pointer itself too unless the
   * upper was made during the session: git run in the upper's work tree enters it behind a
   * gitlink and reads the git directory it names, which the server may have made in an earlier
   * session (the first walk took it for the person's).
   */
  private pointerMoved(path: string, id: string): string[] {
    const known = this.pointers.get(id);
    if (known === undefined || known.path === path) return [];
    known.path = path;
    const out: string[] = [];
    let own = false;
    for (const g of this.gitAbove(path)) {
      if (known.above.has(g.id)) continue;
      out.push(...(g.pointer ? [g.path] : codeIn(g.path, namesIn(g.path))));
      if (this.ofStart(g)) own = true;
    }
    if (own) out.push(path);
    return out;
  }

  /** Whether `g` (from `gitAbove`) was found by the first walk: a pointer or a git directory. */
  private ofStart(g: { id: string; pointer: boolean }): boolean {
    return g.pointer ? this.pointers.has(g.id) : this.noted.get(g.id)?.fromStart === true;
  }

  /**
   * The git directories (a `.git`, or a bare one) and `.git` files or links in the directories
   * above the work tree of the git directory `dir`, up to the top of the roots: what git finds
   * from it once it cannot read `dir`.
   */
  private gitAbove(dir: string): { path: string; id: string; pointer: boolean }[] {
    const tree = basename(dir) === '.git' ? dirname(dir) : dir;
    const roots = this.roots();
    const out: { path: string; id: string; pointer: boolean }[] = [];
    for (let above = dirname(tree); roots.some((r) => inside(above, r)); above = dirname(above)) {
      for (const path of [join(above, '.git'), above]) {
        const st = lstatOrNone(path);
        if (st === undefined) continue;
        const id = `${st.dev}:${st.ino}`;
        if (!st.isDirectory()) out.push({ path, id, pointer: true });
        else if (basename(path) === '.git' || isGitDirShape(namesIn(path))) {
          out.push({ path, id, pointer: false });
        }
      }
      if (above === dirname(above)) break;
    }
    return out;
  }

  /**
   * `path`, a `.git`, as the server's when it is a file or a link that the first walk did not
   * find, inside a noted repository's work tree; noted instead during the first walk.
   */
  private newPointer(path: string): string[] {
    const id = pointerIdentity(path);
    if (id === undefined) return [];
    if (this.fresh(path)) {
      this.pointers.set(id, { path, above: new Set(this.gitAbove(path).map((g) => g.id)) });
      if (!this.places.has(dirname(path))) this.places.set(dirname(path), id);
      return [];
    }
    if (this.pointers.has(id)) {
      // The start's, but put where another repository of the start stood (moved away first),
      // or carried below another.
      const stood = this.places.get(dirname(path));
      if (stood === undefined) this.places.set(dirname(path), id);
      const out = this.pointerMoved(path, id);
      if (stood !== undefined && stood !== id && !out.includes(path)) out.push(path);
      return out;
    }
    // New: the server's inside or above the person's repositories, and where one of them (or a
    // link naming one) stood: git run there reads the git directory it names (an attacker pass).
    const stood = this.places.has(dirname(path));
    return stood || this.inWorkTree(path) || this.coversPersons(path) ? [path] : [];
  }

  /**
   * A walk or an event met the link `path`: noted by the first walk when it names a repository;
   * after that, the server's when it stands where one of the person's repositories (or a link
   * naming one) stood, or on the way there, and is not that link: the person's `git -C proj
   * status` follows it to whatever repository it names (the server moved `proj`, or a folder
   * above it, away first).
   */
  linkAt(path: string): string[] {
    const fresh = this.fresh(path);
    // Most links are on the way to no repository's place: nothing to look at after the first walk.
    if (!fresh && !this.onTheWayToPlace(path)) return [];
    const st = lstatOrNone(path);
    if (st === undefined || !st.isSymbolicLink()) return [];
    const id = `${st.dev}:${st.ino}`;
    if (fresh) {
      if (namesRepository(path)) {
        this.repoLinks.set(path, id);
        if (!this.places.has(path)) this.places.set(path, id);
      }
      return [];
    }
    return this.repoLinks.get(path) === id ? [] : [path];
  }

  /** Whether `path` is where one of the person's repositories stood, or a folder above one. */
  private onTheWayToPlace(path: string): boolean {
    for (const place of this.places.keys()) if (inside(place, path)) return true;
    return false;
  }

  /** Whether `path` lies in the work tree of one of the person's repositories (after the start). */
  inPersonsWorkTree(path: string): boolean {
    return !this.fresh(path) && this.inWorkTree(path);
  }

  /** The person's git directories (noted at the start), where they are now. */
  personsGitDirs(): string[] {
    return [...this.persons()];
  }

  /** The git directories noted at the start: the person's. */
  private *persons(): Generator<string> {
    for (const n of this.noted.values()) if (n.fromStart) yield n.path;
  }

  /** The roots every walk so far covered, and the one under way. */
  private roots(): string[] {
    return [...this.seen, ...(this.walking ?? [])];
  }

  /** Whether `path` lies in the work tree of one of the person's repositories. */
  private inWorkTree(path: string): boolean {
    for (const d of this.persons()) {
      if (path !== d && basename(d) === '.git' && inside(path, dirname(d))) return true;
    }
    for (const tree of this.outerTrees) if (inside(path, tree)) return true;
    return this.underPointer(path);
  }

  /**
   * Whether a directory above `path`, in the roots, holds one of the `.git` files or links the
   * first walk found: the work tree of a repository whose git directory lies elsewhere (a linked
   * worktree, a submodule's checkout, a `--separate-git-dir` clone), which no noted `.git`
   * directory marks. Found by identity, wherever the server renamed the tree to.
   */
  private underPointer(path: string): boolean {
    const roots = this.roots();
    for (let dir = dirname(path); roots.some((r) => inside(dir, r)); dir = dirname(dir)) {
      const id = pointerIdentity(join(dir, '.git'));
      if (id !== undefined && this.pointers.has(id)) return true;
      if (dir === dirname(dir)) break;
    }
    return false;
  }

  /**
   * Whether `path` may lie in some repository's work tree, whoever's: one of the person's, or a
   * `.git` of any kind in a directory above it in the roots. Cheap, and no more than a hint of where a
   * denied directory (which the watch does not enter) must be looked into for git directories.
   */
  mayBeInWorkTree(path: string): boolean {
    // Inside a git directory (its `hooks`, say): git never takes a path there for a work tree's.
    if (path.split('/').includes('.git')) return false;
    if (this.inWorkTree(path)) return true;
    const roots = this.roots();
    for (let dir = dirname(path); roots.some((r) => inside(dir, r)); dir = dirname(dir)) {
      if (lstatOrNone(join(dir, '.git')) !== undefined) return true;
      if (dir === dirname(dir)) break;
    }
    return false;
  }

  /**
   * Whether git, run in one of the person's repositories, would find the git directory (or
   * `.git` file) at `dir` once that repository's own could not be read (its `HEAD` renamed away,
   * which a server with the root writable can do): a `.git` in a directory above it (or in its
   * work tree's own place), or a bare git directory holding it. Git looks upward from where it
   * runs.
   */
  private coversPersons(dir: string): boolean {
    const scope = basename(dir) === '.git' ? dirname(dir) : dir;
    for (const d of this.persons()) {
      const tree = basename(d) === '.git' ? dirname(d) : d;
      if (dir !== d && inside(tree, scope)) return true;
    }
    return false;
  }

  private note(dir: string, id: string, names: ReadonlySet<string>): void {
    const fromStart = this.fresh(dir);
    this.noted.set(id, {
      path: dir,
      code: new Set(GIT_DIR_CODE.filter((n) => names.has(n))),
      fromStart,
      ...(fromStart ? { above: new Set(this.gitAbove(dir).map((g) => g.id)) } : {}),
    });
    if (fromStart && !this.places.has(placeOf(dir))) this.places.set(placeOf(dir), id);
  }

  /**
   * Whether `dir`, not noted, is a git directory (or a `.git` that could become one) inside one
   * of the person's repositories: a `.git` or a bare git directory in its work tree (or below its
   * `.git/modules/`). Not one below `worktrees/` (a linked worktree's, which only its own `.git`
   * file leads to).
   */
  private insidePersons(dir: string, names: ReadonlySet<string>): boolean {
    if (this.fresh(dir)) return false;
    if (basename(dir) === '.git' && this.inWorkTree(dir)) return true;
    if (!isGitDirShape(names)) return false;
    // A bare git directory anywhere in the work tree (git run there or below takes it before the
    // repository's own `.git`), below `.git/modules/` included; below `.git/worktrees/`, not.
    for (const d of this.persons()) if (inside(dir, join(d, 'worktrees'))) return false;
    return this.inWorkTree(dir);
  }
}

/**
 * Notes for places the server cannot write (its program's directories): nothing there is the
 * server's to move aside, and the person's own git work there (a commit, a `git init`) must not
 * be taken for it. Only denied paths are watched there (deny-watch.ts, `gitNotes: false`).
 */
export class NoGitNotes extends GitNotes {
  override walkBegins(): void {}
  override walkEnded(): void {}
  override walked(): string[] {
    return [];
  }
  override appeared(): string[] {
    return [];
  }
  override held(): boolean {
    return false;
  }
  override vanished(): void {}
  override linkAt(): string[] {
    return [];
  }
  override inPersonsWorkTree(): boolean {
    return false;
  }
  override personsGitDirs(): string[] {
    return [];
  }
  override mayBeInWorkTree(): boolean {
    return false;
  }
}
