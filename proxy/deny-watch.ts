/**
 * Watching a sandboxed server's roots for denied paths that appear after it started. The sandbox
 * hides a denied path by a mount laid over it at start, so a path created later (or renamed into
 * a denied name, or replaced by an editor's save, which detaches the old mount in the sandbox) is
 * visible to the server until it is started again. This reports each such path at once, straight
 * from the kernel's event (no settling, no stat before the report), so that the supervisor can
 * stop the server before it reads much.
 *
 * One `fs.watch` per directory of the roots' trees (inotify), not descending into what is denied:
 * a hidden directory is an empty tmpfs in the sandbox, so nothing created inside it is visible.
 *
 * A directory that appears is watched first and read after, so that nothing created in it is
 * missed; an entry created between the two is then seen twice, by the read and by the watch's
 * event. Each report restarts the server, and a second restart stops the server the first one
 * started (a call in flight there fails), so such an entry is reported once: see `walkReport`.
 *
 * An inotify watch follows its directory's inode, not its path: a watched directory removed or
 * moved away, with another made (or moved) under its name before its event is read, left the
 * name held by a watch that was dead or followed the old directory elsewhere, and the new one was
 * never watched: a denied file made in it later was not reported. Each watch keeps the identity
 * of what it watches, a directory whose identity changed under a watched name is watched afresh,
 * and a watch that reports its own directory's removal or move gives up its name.
 */
import {
  closeSync,
  constants,
  fstatSync,
  openSync,
  type Dirent,
  type FSWatcher,
  type Stats,
} from 'node:fs';
import { lstatOrNone } from '../common/errors.js';
import { basename, dirname, join } from 'node:path';
import { readdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { DenyAccess, DenyMeta, Root } from '../common/types.js';
import { guardedWatch } from '../common/watch-flood.js';
import { GitNotes, NoGitNotes } from './git-notes.js';
import type { ProxyLogger } from './log.js';
import { denyTest, inside, rawEntriesOf, rootDenies } from './sandbox-mounts.js';

/** A denied path that exists now and did not (as this file) when the server started. */
export interface DeniedPath {
  path: string;
  /** `all`: hidden (unreadable); `write`: read-only. */
  access: DenyAccess;
  /** What the log says, when not that a denied path appeared. */
  why?: string;
}

export interface DenyWatchOptions {
  onDenied(denied: DeniedPath): void;
  /**
   * `path` is one of git's code entries (`GIT_DIR_CODE`) that is the server's, not the person's
   * (git-notes.ts), in the directory whose identity (device and inode) is `dirIdentity`. No
   * mount could protect a name that did not exist, so it must not stay (git-plant.ts). Called
   * before anything else is done about it; returns what the log should say.
   */
  onPlanted(path: string, dirIdentity: string): string;
  /** The same for a directory whose name is not UTF-8, in a repository's work tree. */
  onPlantedUnnamed(dir: string, name: Buffer, dirIdentity: string): string;
  log: ProxyLogger;
  /**
   * The most directories watched at once (each is an inotify watch); default 50,000. Past it
   * the watch fails closed (`blindSpot`): a server can grow its roots that far, in an earlier
   * session too. 0 turns the watch off (a warning).
   */
  maxDirs?: number;
  /** The most watches kept retired (`WatchSet.retired`); default `RETIRED_MAX`. */
  maxRetired?: number;
  /** false: places the server cannot write, where git's entries are no concern (`NoGitNotes`). */
  gitNotes?: false;
}

interface WatchedRoot {
  path: string;
  denies: { test: (p: string) => boolean; access: DenyAccess }[];
  /** Whether the server may write here (a link under a denied name is then reported). */
  writable: boolean;
}

/** One generation of watches: live until the next is complete, so that no event falls between. */
interface WatchSet {
  watchers: Map<string, FSWatcher>;
  /** The identity (device and inode) of the directory each watcher was set on. */
  identities: Map<string, string>;
  live: boolean;
  /** Directories being read by a reporting walk: what their watch reported meanwhile. */
  walking: Map<string, Set<string>>;
  /** Entries a walk reported: the one event each may still have queued is not reported again. */
  walked: Set<string>;
  /**
   * Watches given up (their directory went away, was renamed, or is another one now), kept open
   * but deaf (`retire`): libuv drops, uncounted, every event still queued for a watch it no longer
   * has, and the flood guard (common/watch-flood.ts) knows of an overflow of the kernel's queue
   * only by counting. A server renamed a directory, filled the queue with events in it behind
   * the rename (dropped once its watch closed), and planted what the overflow then hid.
   */
  retired: { w: FSWatcher; id: string | undefined; dir: string }[];
}

/**
 * The most watches a set keeps retired (about 1.2 KB each). Past it the server is stopped, and
 * the watches closed once the next plan has walked the roots afresh (`update`): a server's
 * rename loop would grow them without end, and a long session's builds removing directories
 * come to it only now and then.
 */
const RETIRED_MAX = 10_000;

/** One appearance of a path: the same path and file (device and inode). */
const appearance = (path: string, st: Stats): string => `${st.dev}:${st.ino}:${path}`;

/** A directory's identity: device and inode. */
const identity = (st: Stats): string => `${st.dev}:${st.ino}`;

const closeSet = (set: WatchSet | undefined): void => {
  if (set === undefined) return;
  set.live = false;
  for (const w of set.watchers.values()) w.close();
  for (const r of set.retired.splice(0)) r.w.close();
  set.watchers.clear();
  set.identities.clear();
  set.walking.clear();
  set.walked.clear();
};

/** A place shown to the server besides its roots (a `read` or `write` path, its program's directory). */
export interface WatchedPath {
  path: string;
  /** The denies and protected paths that could lie in it. */
  denies: readonly DenyMeta[];
  writable: boolean;
}

export class DenyWatch {
  private current: WatchSet | undefined;
  private next: WatchSet | undefined;
  private key = '';
  private warned = false;
  /** Why the last walk of the roots could not watch them all, when the server must not start. */
  private blind: string | undefined;
  /** Walks of directories that appeared, under way. */
  private readonly walks = new Set<Promise<void>>();
  /** The person's git directories and their code entries (git-notes.ts). */
  private readonly gitNotes: GitNotes;
  /**
   * The retired watches reached `RETIRED_MAX` and the server was stopped: the next plan's walk
   * comes after it, so the last set's watches may close then, events queued or not.
   */
  private drain = false;

  constructor(private readonly o: DenyWatchOptions) {
    this.gitNotes = o.gitNotes === false ? new NoGitNotes() : new GitNotes();
  }

  /**
   * Watch these roots for their denies (`_meta['mcp-roots/deny']`, and the built-in protected
   * `**\/NAME` paths in a writable one: `rootDenies`), and the sandbox's extra
   * writable paths (canonical) for theirs; resolves once every directory is watched. The same
   * roots and denies as before keep the watches they have; new ones are complete before the old
   * ones close.
   */
  async update(roots: readonly Root[], paths: readonly WatchedPath[] = []): Promise<void> {
    const all = [
      ...roots.map((r) => ({
        path: fileURLToPath(r.uri),
        denies: rootDenies(r),
        writable: r._meta['mcp-roots/readOnly'] !== true,
      })),
      ...paths,
    ];
    const key = JSON.stringify(all.map((r) => [r.path, r.denies, r.writable]));
    if (key === this.key) return;
    this.key = key;
    this.blind = undefined;
    closeSet(this.next);
    const set: WatchSet = {
      watchers: new Map(),
      identities: new Map(),
      live: true,
      walking: new Map(),
      walked: new Set(),
      retired: [],
    };
    this.next = set;
    this.gitNotes.walkBegins(all.filter((r) => r.denies.length > 0).map((r) => r.path));
    try {
      for (const r of all) {
        const denies = r.denies.map((d) => ({ test: denyTest(d), access: d.access }));
        if (denies.length === 0) continue;
        const root: WatchedRoot = { path: r.path, denies, writable: r.writable };
        await this.watchTree(set, root, root.path, false);
      }
    } catch (err) {
      // Not walked whole: the next plan must walk again, not find the same key and return.
      this.key = '';
      throw err;
    }
    this.gitNotes.walkEnded();
    if (this.next !== set) return;
    this.next = undefined;
    const old = this.current;
    this.current = set;
    if (this.drain) {
      this.drain = false;
      closeSet(old);
    } else if (old !== undefined) this.handOver(old, set);
  }

  /**
   * The last set's watches, once `set` watches the roots: one of a directory `set` watches too
   * closes (the kernel keeps the watch for `set`'s, and hands its events to it); every other one
   * is retired in `set`, as a directory that went away is (`WatchSet.retired`).
   */
  private handOver(old: WatchSet, set: WatchSet): void {
    old.live = false;
    const watched = new Set(set.identities.values());
    for (const [dir, w] of old.watchers) {
      const id = old.identities.get(dir);
      if (id !== undefined && watched.has(id)) w.close();
      else this.retire(set, w, id, dir);
    }
    for (const r of old.retired.splice(0)) this.retire(set, r.w, r.id, r.dir);
    old.watchers.clear();
    old.identities.clear();
  }

  /** Give up the watches of `path` and below (it went away, or was renamed): retired. */
  private unwatchBelow(set: WatchSet, path: string): void {
    for (const [dir, w] of set.watchers) {
      if (!inside(dir, path)) continue;
      set.watchers.delete(dir);
      this.retire(set, w, set.identities.get(dir), dir);
      set.identities.delete(dir);
    }
  }

  /** `w` (of directory `dir`, identity `id`) is no longer the set's: kept open, deaf, and counted. */
  private retire(set: WatchSet, w: FSWatcher, id: string | undefined, dir: string): void {
    set.retired.push({ w, id, dir });
    const max = this.o.maxRetired ?? RETIRED_MAX;
    if (set.retired.length !== max + 1) return;
    this.drain = true;
    this.onLost(
      set,
      dir,
      `more than ${max} watched directories went away or moved during the session; the server is stopped so that their watches can close once the roots are watched afresh`,
    );
  }

  /**
   * Why the last walk of the roots (`update`) could not watch them all, when that must keep the
   * server from starting: a watch the kernel refused (the user's inotify watches used up, or a
   * directory of the user's that the user may not read: the server can do either), or more
   * directories than `maxDirs`.
   */
  blindSpot(): string | undefined {
    return this.blind;
  }

  /** The person's git directories noted at the start, where they are now (git-notes.ts). */
  personsGitDirs(): string[] {
    return this.gitNotes.personsGitDirs();
  }

  /** Resolves once no walk of a directory that appeared is under way. */
  async settled(): Promise<void> {
    while (this.walks.size > 0) await Promise.all(this.walks);
  }

  /** Stop watching everything. */
  close(): void {
    this.key = '';
    closeSet(this.next);
    closeSet(this.current);
    this.next = this.current = undefined;
  }

  /**
   * The strongest deny of `root` naming `path`, if any. A `link` is covered by no mount
   * (sandbox-mounts.ts): in a writable root, what reads a denied or protected name follows it and
   * the layout refuses to start with one, so it is reported; in a read-only root it is left as
   * it is, its target shown or hidden on its own, where it lands.
   */
  private denial(root: WatchedRoot, path: string, link = false): DeniedPath | undefined {
    if (link && !root.writable) return undefined;
    if (path === root.path || !inside(path, root.path)) return undefined;
    let found: DeniedPath | undefined;
    for (const d of root.denies) {
      if (!d.test(path)) continue;
      if (d.access === 'all') return { path, access: 'all' };
      found = { path, access: 'write' };
    }
    return found;
  }

  /**
   * Watch `dir` and the directories below it that are not denied. With `report`, denied entries
   * found on the way are reported: a directory that appears whole (moved in) may carry them.
   *
   * A denied directory in a repository's work tree is watched too, `gitOnly`: for git directories
   * (git-notes.ts), not for denies (it is denied whole, and reported once). It is not hidden from
   * git outside the sandbox, which enters it behind a gitlink the server stages and runs what a
   * git directory there says; unwatched, a server filled it unseen until its restart.
   */
  private async watchTree(
    set: WatchSet,
    root: WatchedRoot,
    dir: string,
    report: boolean,
    gitOnly = false,
  ): Promise<void> {
    if (!set.live || set.watchers.has(dir)) return;
    const max = this.o.maxDirs ?? 50_000;
    if (max === 0) return this.cannotWatch(dir, 'the watch is off (MCP_ROOTS_PROXY_WATCH_DIRS=0)');
    if (set.watchers.size >= max) {
      return this.unwatchable(
        set,
        dir,
        report,
        `the roots hold more than ${max} directories (a server can make that many to get past the watch): narrow the roots, remove what was made, or raise MCP_ROOTS_PROXY_WATCH_DIRS in the proxy's environment`,
      );
    }
    let w: FSWatcher;
    try {
      w = guardedWatch(
        dir,
        { persistent: false, encoding: 'buffer' },
        (event, name) => {
          // A retired watch's events were counted (guardedWatch), which is all it is kept for.
          if (set.watchers.get(dir) !== w) return;
          if (event !== 'rename' || name === null) return;
          try {
            const text = name.toString('utf8');
            if (!Buffer.from(text).equals(name)) return this.onUnnameable(set, root, dir, name);
            if (text === basename(dir)) this.maybeSelf(set, root, dir, w);
            this.onEntry(set, root, join(dir, text), gitOnly);
          } catch (err) {
            // An error no event should bring (a path too long to name, say) must neither end the
            // proxy nor leave the entry unseen: fail closed, as for a lost watch.
            this.onLost(set, dir, `an event in ${dir} could not be handled (${String(err)})`);
          }
        },
        () => this.onFlood(set, dir),
      );
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // A directory that went away meanwhile needs no watch. One of another user's that this
      // user may not read (a container's volume) the server cannot fill either: a warning.
      if (code === 'ENOENT' || code === 'ENOTDIR') return;
      const owner = lstatOrNone(dir)?.uid;
      if ((code === 'EACCES' || code === 'EPERM') && owner !== process.getuid?.()) {
        return this.cannotWatch(dir, (err as Error).message);
      }
      // Anything else fails closed: the user's own directory made unreadable (mode 300 keeps it
      // writable), the user's inotify watches used up; the server can do either.
      return this.unwatchable(
        set,
        dir,
        report,
        `${(err as Error).message}${unwatchableHint(code, dir)}`,
      );
    }
    // inotify followed whatever `dir` is now; what it is, is what the watch is of (a link in
    // its place leads elsewhere: not watched, as links are not entered).
    const st = lstatOrNone(dir);
    if (st === undefined || !st.isDirectory()) {
      // Closed, the kernel's IN_IGNORED for it (and what came meanwhile) would be dropped by
      // libuv uncounted, leaving the flood guard short: retired, as a watch given up is.
      this.retire(set, w, undefined, dir);
      return;
    }
    // Node closes a watch that reports an error: what is made in `dir` from then on goes unseen.
    w.on('error', (err) =>
      this.onLost(
        set,
        dir,
        `watching ${dir} failed (${err.message}), so a denied path made there would go unseen`,
      ),
    );
    set.watchers.set(dir, w);
    set.identities.set(dir, identity(st));
    const reported = new Set<string>();
    if (report) set.walking.set(dir, reported);
    try {
      // Names as bytes: one that is not UTF-8 cannot be looked up by its text (U+FFFD in its
      // place), so what it is, and what is below it, is seen only this way.
      const entries: { name: string; e: Dirent<Buffer> }[] = [];
      for (const e of await entriesOfHeld(dir, identity(st))) {
        const name = e.name.toString('utf8');
        if (Buffer.from(name).equals(e.name)) entries.push({ name, e });
        // Made after the first walk: as for its event (in a work tree, by any walk). One there
        // at the start is the layout's to hide (sandbox-mounts.ts).
        else this.onUnnameable(set, root, dir, e.name, report);
      }
      this.gitWalked(set, dir, identity(st), new Set(entries.map((x) => x.name)), report);
      for (const { name, e } of entries) {
        const p = join(dir, name);
        if (e.isSymbolicLink()) {
          const replaced = this.gitNotes.linkAt(p);
          if (replaced.length > 0) this.plantedFound(set, replaced, identity(st), report);
        }
        const denied = gitOnly ? undefined : this.denial(root, p, e.isSymbolicLink());
        if (denied !== undefined) {
          if (report) this.walkReport(set, denied, reported);
          if (e.isDirectory() && this.gitNotes.mayBeInWorkTree(p))
            await this.watchTree(set, root, p, report, true);
          continue;
        }
        if (e.isDirectory()) await this.watchTree(set, root, p, report, gitOnly);
      }
    } finally {
      if (set.walking.get(dir) === reported) set.walking.delete(dir);
    }
  }

  /**
   * A walk of `path`, which appeared, under way (`settled` waits for it). One that fails (a file
   * system error no walk expects) fails closed, as a lost watch does.
   */
  private walking(set: WatchSet, path: string, done: Promise<void>): void {
    const walk = done
      .catch((err: unknown) =>
        this.onLost(
          set,
          path,
          `walking ${path} failed (${String(err)}), so what is in it went unseen`,
        ),
      )
      .finally(() => this.walks.delete(walk));
    this.walks.add(walk);
  }

  /**
   * A git code entry that is read-only in the sandbox was replaced (the person's `git config`
   * renames a new `config` over the old): the kernel drops a mount whose file is replaced, so the
   * server may write the new one until it is stopped, or link it under another name to write
   * later. It is stopped now, and the next plan walks the roots afresh, where a code entry with a
   * second name is handed on (git-notes.ts). What it wrote in the moment before the stop stays:
   * docs/security.md says so.
   */
  private codeReplaced(path: string): DeniedPath {
    this.key = '';
    return {
      path,
      access: 'all',
      why: `${path} was replaced, and its read-only mount in the sandbox with it`,
    };
  }

  /**
   * A walk found `denied` in a directory it watched just before reading it. If the directory's
   * watch has already reported the same appearance (same path and inode) during this walk, that
   * was the report. Otherwise this is, and it takes the place of the one event the watch may
   * still have queued for it: that event was queued before the read saw the entry, so it is read
   * from the kernel before the loop's next check phase, when the exemption ends. Only one event
   * is exempted, and only until then: a path removed or renamed away and back queues two events
   * more, and a reused inode comes with an event for the removal too, so each is reported again.
   */
  private walkReport(set: WatchSet, denied: DeniedPath, reported: Set<string>): void {
    const st = lstatOrNone(denied.path);
    if (st !== undefined) {
      const key = appearance(denied.path, st);
      if (reported.delete(key)) return;
      set.walked.add(key);
      setImmediate(() => set.walked.delete(key));
    }
    this.o.onDenied(denied);
  }

  /** An entry of a watched directory appeared, went away, or was renamed (either end). */
  private onEntry(set: WatchSet, root: WatchedRoot, path: string, gitOnly = false): void {
    if (!set.live) return;
    // A synchronous lstat: the report must not wait behind anything else the proxy does.
    const st = lstatOrNone(path);
    if (st === undefined) {
      this.gitNotes.vanished(path, set.identities.get(dirname(path)));
      return this.unwatchBelow(set, path);
    }
    // A name whose watch is of another directory (or of one that is no longer there): the
    // watches below it follow that one, and this one is watched afresh below.
    const held = set.identities.get(path);
    if (held !== undefined && (!st.isDirectory() || held !== identity(st)))
      this.unwatchBelow(set, path);
    // Whatever it is (a link too: git follows it), a code entry new in a git directory.
    const dirId = set.identities.get(dirname(path));
    // A link put where one naming the person's repository stood (re-pointed).
    const replaced = st.isSymbolicLink() ? this.gitNotes.linkAt(path) : [];
    if (replaced.length > 0 && dirId !== undefined) {
      return this.plantedFound(set, replaced, dirId, true);
    }
    const planted = this.gitNotes.appeared(path, dirId);
    if (planted.length > 0 && dirId !== undefined) {
      return this.plantedFound(set, planted, dirId, true);
    }
    // The person's code entry replaced (`git config`), wherever its git directory stands: a
    // bare or separate one's is read-only by the layout's own rule, not by a deny pattern.
    if (!st.isDirectory() && this.gitNotes.held(path, dirId)) {
      return this.o.onDenied(this.codeReplaced(path));
    }
    const denied = gitOnly ? undefined : this.denial(root, path, st.isSymbolicLink());
    if (denied !== undefined) {
      const key = appearance(path, st);
      if (set.walked.delete(key)) return; // the walk reported this appearance (`walkReport`)
      set.walking.get(dirname(path))?.add(key);
      this.o.onDenied(denied);
      if (st.isDirectory() && this.gitNotes.mayBeInWorkTree(path))
        this.walking(set, path, this.watchTree(set, root, path, true, true));
      return;
    }
    if (!st.isDirectory()) return;
    this.walking(set, path, this.watchTree(set, root, path, true, gitOnly));
  }

  /**
   * The watch of `dir` named its own directory: removed or moved away (a removed directory made
   * again at once may get its inode number back, so the identity cannot tell), or an entry of
   * the same name. When no such entry stands, the watch is dead or follows the directory
   * elsewhere: `dir` and below give up their watches, and what stands at `dir` now is looked at
   * as a new entry (watched afresh, its denied entries reported).
   */
  private maybeSelf(set: WatchSet, root: WatchedRoot, dir: string, w: FSWatcher): void {
    if (!set.live || set.watchers.get(dir) !== w) return;
    if (lstatOrNone(join(dir, basename(dir))) !== undefined) return;
    this.unwatchBelow(set, dir);
    this.onEntry(set, root, dir);
  }

  /**
   * An entry whose name is not UTF-8 appeared (or went) in `dir`. It cannot be watched, nor
   * hidden, by name: when it is denied, or a directory that may carry what is, the server is
   * restarted, and its layout hides the nearest ancestor that can be named, or refuses to start
   * (sandbox-mounts.ts). What is made inside such a directory later is not seen.
   */
  private onUnnameable(
    set: WatchSet,
    root: WatchedRoot,
    dir: string,
    name: Buffer,
    report = true,
    dirId = set.identities.get(dir),
  ): void {
    const st = lstatOrNone(Buffer.concat([Buffer.from(dir), Buffer.from('/'), name]));
    if (st === undefined || st.isSymbolicLink()) return;
    const path = join(dir, name.toString('utf8'));
    // What is inside cannot be walked by name: in the person's work tree (a repository git would
    // find there, behind a gitlink), it is moved aside whole. By any walk after the start (one
    // after lost events has no event to go by), not only by one of a directory that appeared.
    if (st.isDirectory() && dirId !== undefined && this.gitNotes.inPersonsWorkTree(path)) {
      const why = this.o.onPlantedUnnamed(dir, name, dirId);
      if (report) return this.o.onDenied({ path, access: 'all', why });
      return this.o.log.warn(why);
    }
    if (!report) return; // the layout hides it (sandbox-mounts.ts)
    const denied = this.denial(root, path);
    if (denied !== undefined) return this.o.onDenied(denied);
    if (!st.isDirectory()) return;
    this.cannotWatch(path, 'its name is not UTF-8');
    this.o.onDenied({ path, access: 'all' });
  }

  /**
   * Events in `dir` came faster than they could be read (common/watch-flood.ts): its watch is
   * closed, so events behind the flood (a denied path made meanwhile) are not seen. Fail closed:
   * the server is stopped as for a denied path, and the next plan watches every root afresh
   * before it lays out mounts, which hide whatever is denied by then. While the flood lasts
   * (the server itself making it, say) each new watch floods again and the server is stopped
   * again.
   */
  private onFlood(set: WatchSet, dir: string): void {
    this.onLost(
      set,
      dir,
      `events in ${dir} came faster than the proxy could read them (a process changing it in a loop?), so a denied path made there would go unseen`,
    );
  }

  /** `dir`'s watch is closed (a flood, an error): fail closed, as for a flood (above). */
  private onLost(set: WatchSet, dir: string, why: string): void {
    if (!set.live) return;
    // Closed already (by the flood guard, or by Node after an error; closing again is harmless).
    set.watchers.get(dir)?.close();
    set.watchers.delete(dir);
    set.identities.delete(dir);
    // The same roots and denies would keep this set, with `dir` unwatched.
    this.key = '';
    this.o.onDenied({ path: dir, access: 'all', why });
  }

  /**
   * A walk read `dir`: git code entries in it that are the server's (git-notes.ts) are handed
   * on. A walk of whole roots (`report` false: while a plan is made, before the server starts)
   * only says so; a walk of a directory that appeared stops the server too.
   */
  private gitWalked(
    set: WatchSet,
    dir: string,
    id: string,
    names: ReadonlySet<string>,
    report: boolean,
  ): void {
    const planted = this.gitNotes.walked(dir, id, names);
    if (planted.length > 0) this.plantedFound(set, planted, id, report);
  }

  /**
   * Each of `paths` is handed on to be moved aside, with the identity of the watched directory
   * that holds it (`dirId` for one in the directory the event or walk was of; one above it, a
   * git directory the server made over the person's repository, has its own); with `stop`, the
   * server is then stopped as for a path denied for reading.
   */
  private plantedFound(
    set: WatchSet,
    paths: readonly string[],
    dirId: string,
    stop: boolean,
  ): void {
    for (const path of paths) {
      // Moved aside already, when a walk and an event both found it.
      if (lstatOrNone(path) === undefined) continue;
      const why = this.o.onPlanted(path, set.identities.get(dirname(path)) ?? dirId);
      if (stop) this.o.onDenied({ path, access: 'all', why });
      else this.o.log.warn(why);
    }
  }

  /**
   * `dir` cannot be watched, and the server may have brought that about: fail closed. Found by a
   * walk of a directory that appeared (`report`), the server is stopped as for a flood; by a walk
   * of the roots, the start is refused (`blindSpot`, supervisor.ts).
   */
  private unwatchable(set: WatchSet, dir: string, report: boolean, why: string): void {
    const reason = `cannot watch ${dir} for denied paths and planted git code: ${why}`;
    if (report) this.onLost(set, dir, reason);
    else this.blind ??= reason;
  }

  private cannotWatch(dir: string, why: string): void {
    if (this.warned) return;
    this.warned = true;
    this.o.log.warn(
      `cannot watch ${dir} for denied paths (${why}): a denied path created there later is hidden from the sandboxed server only when it is next restarted`,
    );
  }
}

/** What to do about a directory the kernel would not watch, by the error's code. */
function unwatchableHint(code: string | undefined, dir: string): string {
  if (code === 'ENOSPC') {
    return ": the user's inotify watches are used up (by the server, perhaps): raise fs.inotify.max_user_watches, or narrow the roots";
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return `: it is yours but not readable (a server can make such a directory and fill it unseen): make it readable (chmod u+r ${dir}) or remove it`;
  }
  return '';
}

/**
 * The entries of the directory `dir` whose identity is `id`, by bytes, or none when `dir` is no
 * longer that directory. Read through a descriptor opened without following a link (by its
 * /proc/self/fd name): a server swapping `dir` for a link to `/` between the walk's lstat and
 * its readdir led the walk, and its watches, out of the roots. Its event is then what goes on.
 */
async function entriesOfHeld(dir: string, id: string): Promise<Dirent<Buffer>[]> {
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch {
    return [];
  }
  try {
    if (identity(fstatSync(fd)) !== id) return [];
    return await readdir(Buffer.from(`/proc/self/fd/${fd}`), {
      withFileTypes: true,
      encoding: 'buffer',
    });
  } catch {
    // No /proc: by name, kept only if `dir` is still the directory afterwards.
    const entries = await rawEntriesOf(Buffer.from(dir));
    const now = lstatOrNone(dir);
    return now !== undefined && identity(now) === id ? entries : [];
  } finally {
    closeSync(fd);
  }
}
