/** Watching policy files and root directories so that every change reaches the subscribers. */
import { lstatSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { sep } from 'node:path';
import type { Logger } from './logger.js';
import { MAX_TIMEOUT_MS } from '../common/expiry-timer.js';
import { errnoCode } from '../common/errors.js';
import { isInsideOrEqual } from '../common/segments.js';
import {
  entersBelow,
  includeBase,
  includeDepth,
  includeMatcher,
  includeWatchDir,
  isGlob,
  nearestExisting,
  nodeFs,
  type RootWatches,
} from '../policies/index.js';
import type { PolicyState } from './state.js';
import { RecomputeThrottle } from './throttle-recompute.js';
import {
  defaultBackend,
  degradeCode,
  degradedMessage,
  type DegradeCode,
  type WatchBackend,
  type WatchEvent,
  type WatchHandle,
} from './watch-backend.js';
import { PolicyEdits } from './policy-edits.js';
import { locateRoots, rootPlaces } from './watch-root-places.js';
import { leadsTo, locate, policyDirs } from './watch-policy.js';
import { wantedWatches, type Watch } from './watch-list.js';
import { wayTo } from './watch-way.js';

export interface WatcherOptions {
  state: PolicyState;
  log: Logger;
  /** Coalescing window for events (ms). */
  settleMs: number;
  /** Full reconciliation interval (ms). */
  rescanMs: number;
  /** Rescan interval for paths that could not be watched by events (ms). */
  degradedRescanMs: number;
  /** The main policy file and the grants file; without them every edit reloads both. */
  configFile?: string;
  grantsFile?: string;
  /** How directories are watched (tests replace it to make watches fail). */
  backend?: WatchBackend;
}

/** A flooded path's warning is logged at most this often (`floodWarnDue`). */
const FLOOD_WARN_EVERY_MS = 60_000;

interface Pending {
  roots: boolean;
  policy: boolean;
  grants: boolean;
}

/** Follows the state's watch plan: events settle, then policy files reload or roots resolve again. */
export class PolicyWatcher {
  private readonly backend: WatchBackend;
  private readonly watches = new Map<string, Watch>();
  private pending: Pending = { roots: false, policy: false, grants: false };
  private settleTimer: NodeJS.Timeout | undefined;
  private settleSince = 0;
  private rescanTimer: NodeJS.Timeout | undefined;
  private degradedTimer: NodeJS.Timeout | undefined;
  private flushChain: Promise<void> = Promise.resolve();
  private planning: Promise<void> | undefined;
  private planAgain = false;
  private closed = false;
  private closing: Promise<void> | undefined;
  /** Reloads when the policy's files really changed (policy-edits.ts). */
  private readonly edits: PolicyEdits;
  private policyNames = new Set<string>();
  private grantNames = new Set<string>();
  /** Directories policy files or include globs live in, existing or not. */
  private wantedDirs: string[] = [];
  private includeGlobs: string[] = [];
  /** The include globs' static directories: whatever appears below one may carry a match. */
  private includeBases: string[] = [];
  private isInclude: (path: string) => boolean = () => false;
  /** The links on the way to the roots' watched directories (watch-links.ts). */
  private rootLinks = new Set<string>();
  /** Every watched directory and every directory above it (watch-way.ts). */
  private wayNames = new Set<string>();
  /** Paths whose failure was logged (once per episode). */
  private readonly warned = new Set<string>();
  /** When each flooded path's warning was logged (`floodWarnDue`). */
  private readonly floodWarnedAt = new Map<string, number>();
  private readonly onResolved = () => void this.requestPlan();
  /** Watches being opened, so that `watchFirst` can wait for one a plan is opening. */
  private readonly opening = new Map<Watch, Promise<boolean>>();
  /** Watches being opened afresh, one after another (`retry`). */
  private readonly reopening = new Map<Watch, Promise<void>>();
  /** A plan left a held watch it does not want (see `watchFirst`). */
  private keptHeld = false;
  /** Directory changes: on the leading edge, then one trailing recompute per root and gap. */
  private readonly throttle = new RecomputeThrottle((paths) =>
    this.enqueue({ roots: true, policy: false, grants: false }, 'directories changed', paths),
  );

  constructor(private readonly opts: WatcherOptions) {
    this.backend = opts.backend ?? defaultBackend;
    this.edits = new PolicyEdits({
      state: opts.state,
      grantsFile: opts.grantsFile,
      settleMs: opts.settleMs,
      closed: () => this.closed,
      again: (what, delayMs) => this.poke(what, delayMs),
    });
  }

  /** Set every watch of the current plan; later plans follow the state's 'resolved' events. */
  async start(): Promise<void> {
    this.opts.state.on('resolved', this.onResolved);
    await this.requestPlan();
    const every = Math.min(Math.max(this.opts.rescanMs, 1), MAX_TIMEOUT_MS);
    this.rescanTimer = setInterval(
      () => void this.enqueue({ roots: true, policy: true, grants: true }, 'rescan'),
      every,
    );
    this.rescanTimer.unref();
    const s = this.status();
    // Counted as `rootsctl status` counts them, so that the two agree at start.
    this.opts.log.info(
      `watching ${s.directories} director${s.directories === 1 ? 'y' : 'ies'} (and ${s.above} above them; ${s.mode})`,
    );
  }

  /**
   * For `daemon/status`: directories watched by events, and those rescanned instead; `above`,
   * the directories above them watched only for a rename on the way (watch-way.ts).
   */
  status(): {
    directories: number;
    above: number;
    mode: 'events' | 'degraded';
    degraded: string[];
  } {
    const active = new Set<string>();
    const above = new Set<string>();
    const degraded = new Set<string>();
    for (const w of this.watches.values()) {
      if (w.degraded) degraded.add(w.path);
      else if (!w.handle) continue;
      else if (wayOnly(w)) above.add(w.path);
      else active.add(w.path);
    }
    return {
      directories: active.size,
      above: above.size,
      mode: degraded.size > 0 ? 'degraded' : 'events',
      degraded: [...degraded].sort(),
    };
  }

  /**
   * Set the root watches a resolution is about to walk for (`PolicyState.watchFirst`), resolving
   * once each is in place: every change after that is reported, so the walk that follows needs
   * no second look. Until the returned function is called (the new snapshot is in force) they
   * are kept even if the snapshot in force does not plan them; then its plan takes them over as
   * watches it already has, with nothing to catch up.
   */
  async watchFirst(targets: RootWatches): Promise<() => void> {
    if (this.closed) return () => {};
    // Keyed by where each directory leads, as the plan keys them: the plan takes them over.
    const located = await locateRoots(targets);
    if (this.closed) return () => {};
    const wanted = wantedWatches({ policyFiles: [], includeDirs: [], ...targets }, [], [], {
      located,
      linkDirs: [],
    });
    const held: Watch[] = [];
    const waits: Promise<boolean>[] = [];
    for (const [key, want] of wanted) {
      let w = this.watches.get(key);
      if (w === undefined) {
        w = want;
        this.watches.set(key, w);
        waits.push(this.open(w));
      } else {
        // Its events count for the roots from now on, before the walk reads.
        for (const role of want.roles) w.roles.add(role);
        waits.push(this.opening.get(w) ?? Promise.resolve(true));
      }
      w.held = (w.held ?? 0) + 1;
      held.push(w);
    }
    this.refreshWay();
    if (held.length > 0) this.opts.log.debug(`watches set before the walk: ${held.length}`);
    await Promise.all(waits);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const w of held) w.held = (w.held ?? 1) - 1;
      // A plan that ran meanwhile kept them; the next one closes those no longer wanted.
      if (this.keptHeld) {
        this.keptHeld = false;
        void this.requestPlan();
      }
    };
  }

  /** The names on the way to every watch in place, those a plan keeps and those set first. */
  private refreshWay(): void {
    this.wayNames = wayTo([...this.watches.values()].map((w) => w.real)).names;
  }

  /** Close every watch and timer; the same promise each time. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.closed = true;
      this.opts.state.off('resolved', this.onResolved);
      this.throttle.close();
      for (const t of [this.settleTimer, this.degradedTimer, this.rescanTimer]) clearTimeout(t);
      this.settleTimer = this.degradedTimer = this.rescanTimer = undefined;
      await this.planning;
      await this.flushChain;
      const handles = [...this.watches.values()].map((w) => w.handle);
      this.watches.clear();
      await Promise.all(handles.map((h) => (h ? h.close() : Promise.resolve())));
    })();
    return this.closing;
  }

  /**
   * Whether nothing is pending: no settle window open, no plan or batch of changes under way
   * (waits for the batch in flight first). No answer of the daemon tells this; tests that must
   * act on an idle watcher ask it.
   */
  async isIdle(): Promise<boolean> {
    const busy = () => this.settleTimer !== undefined || this.planning !== undefined;
    if (busy()) return false;
    await this.flushChain;
    return !busy();
  }

  /** Re-plan once now, and once more if asked again meanwhile. */
  private requestPlan(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.planning) {
      this.planAgain = true;
      return this.planning;
    }
    const run = (async () => {
      do {
        this.planAgain = false;
        await this.plan();
      } while (this.planAgain && !this.closed);
    })()
      .catch((err: unknown) => {
        this.opts.log.error(`cannot update the watches: ${String(err)}`);
      })
      .finally(() => {
        this.planning = undefined;
      });
    this.planning = run;
    return run;
  }

  /** Open the watches the plan needs, close those it no longer names. */
  private async plan(): Promise<void> {
    const { state, grantsFile } = this.opts;
    const wp = state.resolved.watchPlan;
    // What a resolution walking now (or done while this plan reads) set first belongs to a
    // snapshot newer than `wp`: it is not this plan's to close (see `stale` below).
    const atStart = new Map([...this.watches.values()].map((w) => [w, (w.held ?? 0) > 0]));
    // The policy in force's files, and those the last load looked at if it was refused (an
    // include it found missing, say): an edit of either may change what is served.
    const looked = state.lastLook('policy');
    this.includeGlobs = [
      ...new Set([...state.includePatterns.filter(isGlob), ...looked.globs.map((g) => g.pattern)]),
    ];
    this.isInclude = includeMatcher(this.includeGlobs);
    // The grants file is the policy's too when the policy includes it.
    const policyFiles = [
      ...new Set([...wp.policyFiles.filter((f) => f !== grantsFile), ...looked.files.keys()]),
    ];
    const includeBases = this.includeGlobs.map(includeBase);
    this.includeBases = includeBases;
    const includeDirs = await Promise.all(
      this.includeGlobs.map((p) => includeWatchDir(nodeFs(), p)),
    );
    const located = await locate(includeDirs);
    // Where a missing base leads: a link whose target was renamed away comes back as an event
    // of the target's name, where the target lies, not of the link's.
    const baseLeads = (
      await Promise.all(
        includeBases.map((b, i) => (includeDirs[i] === b ? Promise.resolve(b) : leadsTo(b))),
      )
    ).filter((l, i) => l !== includeBases[i]);
    const leadDirs = await Promise.all(baseLeads.map((l) => nearestExisting(nodeFs(), l)));
    const pol = await policyDirs(policyFiles, [...includeDirs, ...leadDirs, ...wp.includeDirs]);
    const gr = await policyDirs(grantsFile === undefined ? [] : [grantsFile], []);
    if (this.closed) return;
    this.policyNames = new Set(pol.names);
    this.grantNames = new Set(gr.names);
    this.wantedDirs = [...new Set([...pol.wanted, ...gr.wanted, ...includeBases, ...baseLeads])];

    // An include glob that reaches below its base (`conf.d/**/*.yaml`) is watched that deep once
    // the base exists (until then its nearest existing directory is, and the base's creation
    // plans again): a file made in a directory below the base was never seen otherwise.
    const includeTrees = this.includeGlobs.flatMap((p, i) => {
      const depth = includeDepth(p);
      return includeDirs[i] === includeBases[i] && depth !== 0 ? [{ ...located[i]!, depth }] : [];
    });
    // A root's directory is watched where its name leads now (a link on the way re-pointed gets
    // a new watch), and the links on the way are watched where they lie.
    const places = await rootPlaces(wp);
    if (this.closed) return;
    this.rootLinks = places.links;
    const wanted = wantedWatches(wp, [...pol.watch, ...gr.watch], includeTrees, places);

    const unwanted = [...this.watches.values()].filter((w) => !wanted.has(w.key));
    // Watches set for a resolution still walking stay until its snapshot is in force. So do
    // those set since this plan began, or held when it did: their snapshot may have come into
    // force while this plan read, after `wp`. Closing them then opened them again a moment
    // later, and for that moment the daemon watched less than the policy in force asked.
    const heldNow = (w: Watch) => (w.held ?? 0) > 0;
    const newer = (w: Watch) => atStart.get(w) !== false;
    const stale = unwanted.filter((w) => !heldNow(w) && !newer(w));
    if (unwanted.some(heldNow)) this.keptHeld = true;
    // Released already, so no release asks for the plan that decides on them. Their snapshot's
    // 'resolved' does, unless its resolution failed after setting them: plan again here.
    if (unwanted.some((w) => !heldNow(w) && newer(w))) this.planAgain = true;
    for (const w of stale) {
      this.watches.delete(w.key);
      w.removed = true;
    }
    await Promise.all(stale.map((w) => (w.handle ? w.handle.close() : Promise.resolve())));
    const fresh: Watch[] = [];
    // A watch kept from the last plan may take on a role it did not have (the policy's directory
    // becoming a root's parent): events it saw before were not attributed to that role.
    const gained = { roots: false, policy: false, links: false, way: false };
    for (const [key, w] of wanted) {
      const existing = this.watches.get(key);
      if (existing) {
        for (const role of w.roles) if (!existing.roles.has(role)) gained[role] = true;
        existing.roles = w.roles;
      } else {
        this.watches.set(key, w);
        fresh.push(w);
      }
    }
    this.refreshWay();
    const opened = await Promise.all(fresh.map((w) => this.open(w)));
    if (stale.length > 0 || fresh.length > 0) {
      this.opts.log.debug(
        `watches: +${fresh.length} -${stale.length}, ${this.status().directories} directories`,
      );
    }
    // A new watch, or a new role of a kept one, misses what happened before it was set: the
    // snapshot was taken before the watch was in place, so look once more now that it is.
    const caught = fresh.filter((_, i) => opened[i]);
    const roots = gained.roots || gained.links || gained.way || caught.some(forRoots);
    const policy = gained.policy || caught.some((w) => w.roles.has('policy'));
    if (roots || policy) this.poke({ roots, policy, grants: policy });
  }

  /** Open one watch; true when it is in place. One opening at a time per watch. */
  private open(w: Watch): Promise<boolean> {
    const p = this.openNow(w).finally(() => {
      if (this.opening.get(w) === p) this.opening.delete(w);
    });
    this.opening.set(w, p);
    return p;
  }

  private async openNow(w: Watch): Promise<boolean> {
    const onEvent = (e: WatchEvent) => this.onEvent(w, e);
    const onError = (err: Error) => this.onWatchError(w, err);
    const degradations = w.degradations;
    let handle: WatchHandle;
    try {
      handle =
        w.depth === 'recursive'
          ? await this.backend.recursive(w.path, w.ignore, onEvent, onError)
          : await this.backend.dir(
              w.path,
              w.depth,
              onEvent,
              onError,
              w.globs === undefined ? undefined : entersBelow(w.globs),
            );
    } catch (err) {
      const code = degradeCode(err);
      if (wayOnly(w) && code !== 'FLOOD' && !isGone(err)) {
        this.skipWay(w, err);
      } else if (code) {
        this.degrade(w, code);
      } else if (isGone(err)) {
        // The directory went away since the plan was made: forget it and plan again.
        if (this.watches.get(w.key) === w) this.watches.delete(w.key);
        this.poke({ roots: true, policy: true, grants: true });
      } else {
        if (!this.warned.has(w.path)) {
          this.opts.log.warn(
            `cannot watch ${w.path} (${String(err)}); rescanning it every ${this.opts.degradedRescanMs / 1000} s instead`,
          );
        }
        this.warned.add(w.path);
        this.degrade(w, 'EPERM');
      }
      return false;
    }
    if (this.closed || w.removed) {
      await handle.close();
      return false;
    }
    w.handle = handle;
    // Degraded while it opened (a flood seen as it read): that handle is closed, and the rescans
    // go on until one opening stays in place.
    if (w.degradations !== degradations) return false;
    if (w.degraded) {
      const was = w.degraded;
      w.degraded = undefined;
      this.warned.delete(w.path);
      // A flood's watch is set again at every rescan, and closed again while the flood lasts.
      if (was === 'FLOOD') this.opts.log.debug(`watching ${w.path} by events again`);
      else this.opts.log.info(`watching ${w.path} by events again`);
    }
    return true;
  }

  private onEvent(w: Watch, e: WatchEvent): void {
    if (this.closed || w.removed) return;
    if (w.roles.has('way')) this.wayEvent(w, e);
    if (w.roles.has('policy')) this.policyEvent(e.path);
    // A link on the way to a root's directory changed, or the directory holding it moved, went
    // or was replaced (an event naming the watch's own path): everything below may have moved.
    if (w.roles.has('links') && (this.rootLinks.has(e.path) || e.path === w.path))
      this.throttle.note('*');
    if (!w.roles.has('roots')) return;
    if (e.kind === 'change') void this.attributeCheck(w, e.path);
    // A removal or a rename can leave what a glob matched somewhere else, and a link in its
    // place: only a full look at the root is sure to drop what went, so only a creation is
    // followed by the changed path alone.
    else if (e.kind !== 'create') this.throttle.note(w.key);
    else if (e.link !== undefined) this.created(w, e.path, !e.link);
    else void this.creationCheck(w, e.path);
  }

  /**
   * A directory on the way to watched ones was renamed, removed, made or replaced: the watches
   * below it follow what was there, and no event tells them (watch-way.ts). Each is opened afresh
   * where its path leads now, then everything is looked at again. A change of its attributes
   * (a `chmod` making what is below unreadable) is looked at too.
   */
  private wayEvent(w: Watch, e: WatchEvent): void {
    // Events name paths as the watch was asked for them; the way is named canonically.
    const path = w.path === w.real ? e.path : w.real + e.path.slice(w.path.length);
    if (path === w.real || !this.wayNames.has(path)) return;
    if (e.kind !== 'change') void this.reopenBelow(path);
    this.poke({ roots: true, policy: true, grants: true });
  }

  /** Open afresh every watch of `top` or below it (watch-way.ts). */
  private async reopenBelow(top: string): Promise<void> {
    const below = [...this.watches.values()].filter(
      (v) => isInsideOrEqual(v.real, top) || isInsideOrEqual(v.path, top),
    );
    if (below.length === 0) return;
    this.opts.log.debug(`${top} changed on the way: opening ${below.length} watches afresh`);
    await Promise.all(below.map((v) => this.retry(v)));
    // What was made before the watches were in place again.
    this.poke({ roots: true, policy: true, grants: true });
  }

  /**
   * A new directory or file is re-walked alone; a new link (it may lead anywhere, or stand where
   * a matched directory was) or an entry already gone again makes a full look at the root. The
   * watches that `lstat` a new entry themselves say whether it is a link (`e.link`). The `lstat`
   * is direct, as there (watch-dir.ts): a hop through the thread pool delayed the recompute.
   * Async as there, so that a throw stays a rejection.
   */
  // eslint-disable-next-line @typescript-eslint/require-await -- see above
  private async creationCheck(w: Watch, path: string): Promise<void> {
    let plain = false;
    try {
      plain = !lstatSync(path).isSymbolicLink();
    } catch {
      // gone again: looked at whole below
    }
    this.created(w, path, plain);
  }

  private created(w: Watch, path: string, plain: boolean): void {
    if (plain) this.throttle.note(w.key, path, w.depth === 'recursive');
    else this.throttle.note(w.key);
  }

  /**
   * Only the policy's own files, what an include glob could load, and their missing directories
   * count. Anything below an include glob's base counts too: a directory moved (or renamed) in
   * brings its files whole, and the only event is the directory's own name, which no glob
   * matches (`conf.d/team` moved under an include of `conf.d/<any>/policy.yaml`): its files
   * were never reported, and the deny they held was not loaded until some other edit.
   */
  private policyEvent(path: string): void {
    const policy =
      this.policyNames.has(path) ||
      this.isInclude(path) ||
      this.includeBases.some((b) => path.startsWith(b === sep ? sep : b + sep));
    const grants = this.grantNames.has(path);
    // A wanted directory made, removed or re-pointed: the watches move too, but at the settle
    // window's pace (`apply` plans after its look), never once per event. A process swapping a
    // link in a loop otherwise kept the planner busy for good, and every batch waiting on it.
    const dir = this.wantedDirs.some((d) => d === path || d.startsWith(path + sep));
    if (policy || grants || dir) this.poke({ policy: policy || dir, grants: grants || dir });
  }

  /**
   * A content write sets mtime and ctime alike; chmod, chown and the like move ctime alone.
   * Only those can change a list (a root becoming unreadable), so writes inside watched
   * directories cost one lstat and no resolution.
   */
  private async attributeCheck(w: Watch, path: string): Promise<void> {
    try {
      const st = await lstat(path);
      if (st.ctimeMs > st.mtimeMs) this.throttle.note(w.key, path);
    } catch {
      // gone: its removal is an event of its own
    }
  }

  private onWatchError(w: Watch, err: Error): void {
    if (this.closed || w.removed) return;
    const code = degradeCode(err);
    if (code) {
      this.degrade(w, code);
      return;
    }
    // Any other error: events may have been lost, and the watch may be gone with them (an
    // `fs.watch` that reported an error is closed; a watch opened afresh that failed left none
    // in place). Look at once, and open it afresh at the rescans until that holds: kept as it
    // was, a dead watch left the directory unseen until the next full rescan.
    if (!this.warned.has(w.path)) {
      const line = `watching ${w.path}: ${err.message}; looking again, and opening its watch afresh every ${this.opts.degradedRescanMs / 1000} s until it holds`;
      // A directory moved away while its watch was opened afresh is no fault of anyone's.
      if (isGone(err)) this.opts.log.debug(line);
      else this.opts.log.warn(line);
    }
    this.warned.add(w.path);
    this.degrade(w, 'LOST');
    this.poke({ roots: true, policy: true, grants: true });
  }

  /**
   * A directory above the watched ones that cannot be watched (one the user may not read, or no
   * inotify watch left) is left so: a rename there is seen at the next rescan. Degraded, it
   * would make every root's rescan every 2 s for as long as the daemon ran.
   */
  private skipWay(w: Watch, err: unknown): void {
    w.skipped = errnoCode(err) ?? String(err);
    if (this.warned.has(w.path)) return;
    this.warned.add(w.path);
    this.opts.log.info(
      `not watching ${w.path} for renames on the way to the watched directories (${w.skipped}): one there is seen at the next rescan`,
    );
  }

  /** Rescan `w` on the short interval until a watch can be set again. */
  private degrade(w: Watch, code: DegradeCode): void {
    w.degraded = code;
    w.degradations = (w.degradations ?? 0) + 1;
    if (code === 'FLOOD' ? this.floodWarnDue(w.path) : !this.warned.has(w.path)) {
      if (code !== 'FLOOD') this.warned.add(w.path);
      this.opts.log.warn(degradedMessage(w.path, code, this.opts.degradedRescanMs));
    }
    this.armDegraded();
  }

  /**
   * A flood's warning at most once a minute per path: its watch comes back at every rescan and
   * goes again while the flood lasts, and a warning each time would flood the log in turn.
   */
  private floodWarnDue(path: string): boolean {
    const now = performance.now();
    for (const [p, at] of this.floodWarnedAt)
      if (now - at >= FLOOD_WARN_EVERY_MS) this.floodWarnedAt.delete(p);
    if (this.floodWarnedAt.has(path)) return false;
    this.floodWarnedAt.set(path, now);
    return true;
  }

  private armDegraded(): void {
    if (this.closed || this.degradedTimer) return;
    if (![...this.watches.values()].some((w) => w.degraded)) return;
    this.degradedTimer = setTimeout(() => void this.degradedTick(), this.opts.degradedRescanMs);
    this.degradedTimer.unref();
  }

  private async degradedTick(): Promise<void> {
    this.degradedTimer = undefined;
    const list = [...this.watches.values()].filter((w) => w.degraded);
    if (this.closed || list.length === 0) return;
    // The next tick is set before this one's openings: one that never ends (a watch library
    // that never says it is ready) must not stop the rescans, of it or of any other. A watch
    // still opening from an earlier tick is left to that opening.
    this.armDegraded();
    const idle = (w: Watch) => !this.opening.has(w) && !this.reopening.has(w);
    await Promise.all(list.filter(idle).map((w) => this.retry(w)));
    // The look comes after the watches are set, so nothing made between the two goes unseen.
    const roots = list.some(forRoots);
    const policy = list.some((w) => w.roles.has('policy'));
    void this.enqueue({ roots, policy, grants: policy }, 'degraded rescan');
  }

  /**
   * Open `w` afresh, after any opening of it under way: two at once (a rename on the way seen
   * twice, a degraded rescan beside it) each set a handle, and the first was never closed.
   */
  private retry(w: Watch): Promise<void> {
    const after = this.reopening.get(w) ?? this.opening.get(w) ?? Promise.resolve();
    const p = after
      .then(async () => {
        const old = w.handle;
        w.handle = undefined;
        await old?.close();
        if (!this.closed && !w.removed) await this.open(w);
      })
      .catch((err: unknown) => {
        this.opts.log.error(`cannot open the watch of ${w.path} afresh: ${String(err)}`);
      })
      .finally(() => {
        if (this.reopening.get(w) === p) this.reopening.delete(w);
      });
    this.reopening.set(w, p);
    return p;
  }

  /**
   * Note what an event may have changed. Directory changes act on the leading edge (see
   * throttle-recompute.ts); policy files wait for the settle window to restart and pass (an
   * editor's save is several steps).
   */
  private poke(what: Partial<Pending>, delay = this.opts.settleMs): void {
    if (this.closed) return;
    if (what.roots) this.throttle.note('*');
    if (!what.policy && !what.grants) return;
    this.pending.policy ||= what.policy ?? false;
    this.pending.grants ||= what.grants ?? false;
    // Read and parse during the window; the reload after it uses the parse if nothing changed.
    if (what.policy) this.edits.prepare();
    const now = performance.now();
    if (this.settleTimer === undefined) this.settleSince = now;
    else if (now - this.settleSince >= Math.max(10 * this.opts.settleMs, 500)) return;
    else clearTimeout(this.settleTimer);
    this.settleTimer = setTimeout(() => {
      this.settleTimer = undefined;
      const due = this.pending;
      this.pending = { roots: false, policy: false, grants: false };
      void this.enqueue(due, 'policy files changed');
    }, delay);
    this.settleTimer.unref();
  }

  /** Apply what is due, one batch after another; `paths` are the directory changes, if known. */
  private enqueue(due: Pending, reason: string, paths?: string[]): Promise<void> {
    this.flushChain = this.flushChain
      .then(() => this.apply(due, reason, paths))
      .catch((err: unknown) => {
        this.opts.log.error(`internal error while following changes: ${String(err)}`);
      });
    return this.flushChain;
  }

  private async apply(due: Pending, reason: string, paths?: string[]): Promise<void> {
    if (this.closed) return;
    let reloaded = false;
    if (due.policy || due.grants)
      reloaded = await this.edits.reloadIfEdited(due.policy, due.grants);
    if (this.closed) return;
    if (due.roots && !reloaded) await this.opts.state.recompute(reason, true, paths);
    // A symlinked policy file may point elsewhere now.
    if (due.policy || due.grants) await this.requestPlan();
  }
}

/** Whether what a watch misses may change the roots (a role other than the policy's). */
function forRoots(w: Watch): boolean {
  return w.roles.has('roots') || w.roles.has('links') || w.roles.has('way');
}

/** Whether a watch is there only for renames on the way (watch-way.ts). */
function wayOnly(w: Watch): boolean {
  return w.roles.size === 1 && w.roles.has('way');
}

/** The error of a path that went away (or became a file) since it was named. */
function isGone(err: unknown): boolean {
  const code = errnoCode(err);
  return code === 'ENOENT' || code === 'ENOTDIR';
}
