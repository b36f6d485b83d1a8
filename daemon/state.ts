/** The daemon's state: the last good policy, the resolved snapshot, its revision, and what changed. */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from './logger.js';
import { PinsFile } from './pins-file.js';
import { errnoCode, ignoreMissing, RootsError } from '../common/errors.js';
import { SerialQueue } from '../common/serial-queue.js';
import { ExpiryTimer } from '../common/expiry-timer.js';
import {
  confinementOnly,
  type Access,
  type CheckResult,
  type ExplainResult,
  type PolicyError,
  type Root,
} from '../common/types.js';
import {
  combinedHash,
  compareUtf8,
  coverageOf,
  LinkPins,
  loadGrantsSource,
  loadPolicySources,
  resolvePolicy,
  type FsView,
  type LoadedSources,
  type PolicyContext,
  type PolicyFileRead,
  type ResolvedPolicy,
  type RootWatches,
  noteReads,
  watchTargets,
  withReads,
} from '../policies/index.js';
import { packageRoot } from '../common/package-info.js';
import { ListJson } from './list-json.js';
import { readKey, type Fingerprint, type LoadLook } from './watch-policy.js';

/** `ctx` whose reads of policy files are noted in `read`, by name (`readKey`). */
function noted<C extends { fs: FsView }>(ctx: C, read: Fingerprint): C {
  return { ...ctx, fs: noteReads(ctx.fs, (path, outcome) => read.set(path, readKey(outcome))) };
}

export interface StateOptions {
  configFile: string;
  grantsFile: string;
  stateDir: string;
  /**
   * Throws unless the state directory and its grants file are still the ones checked at start
   * (daemon/state-dir.ts): called before each load of the grants file.
   */
  verifyStateDir?: () => Promise<void>;
  runtimeDir: string;
  home: string;
  env: Record<string, string | undefined>;
  fs: FsView;
  log: Logger;
  /** `rootsctl status` as the person can run it, for the lines that point to it. */
  statusCommand?: string;
  /** rootsctl as the person can run it from anywhere, for the messages the daemon sends. */
  rootsctl?: string;
  /** The clock (tests may not need it, but the engine never reads one itself). */
  now?: () => number;
}

/** One server whose list changed in a recomputation. */
export interface Change {
  server: string;
  roots: Root[];
  /** The list's JSON as UTF-8 pieces (list-json.ts), to be sent as they are. */
  parts: readonly Buffer[];
  added: string[];
  removed: string[];
  /** Roots in both lists whose access or name changed (a root made read-only, say). */
  changed: string[];
}

export interface StateEvents {
  /** A recomputation changed these servers' lists; the revision has grown by one. */
  changed: [revision: number, changes: Change[]];
  /** A new snapshot is in force (the watch plan may have changed). */
  resolved: [resolved: ResolvedPolicy];
  /** A (re)load ran: taken when `errors` is empty, else the last good policy keeps serving. */
  loaded: [reason: string, files: string[], errors: PolicyError[]];
  /** Lockdown was turned on or off. */
  lockdown: [on: boolean];
}

const EMPTY: LoadedSources = {
  files: [],
  errors: [],
  warnings: [],
  includePatterns: [],
  globbed: [],
  located: [],
  missingMain: false,
  salvaged: [],
};
/** How many names asked about (but not subscribed) are remembered for diffing. */
const RECENT_NAMES = 256;
const LOCKDOWN_FILE = 'lockdown';

/** Holds the current snapshot; every change goes through `recompute`, one at a time. */
export class PolicyState extends EventEmitter<StateEvents> {
  readonly instance = randomUUID();
  revision = 0;
  lockdown = false;
  loadedAt = new Date(0);
  /** Whether any policy file was valid since start: else there is no last good policy to keep. */
  private policyEverValid = false;
  sha256 = '';
  /** Errors of the policy files as they are on disk now (the last good policy keeps serving). */
  errors: PolicyError[] = [];
  warnings: PolicyError[] = [];
  private base: LoadedSources = EMPTY;
  private grants: LoadedSources = EMPTY;
  private baseErrors: PolicyError[] = [];
  private grantsErrors: PolicyError[] = [];
  private current!: ResolvedPolicy;
  /** Last sent list of every name we diff: literal names, subscribed names, recently listed names. */
  private readonly lists = new Map<string, Root[]>();
  private readonly recent = new Set<string>();
  private readonly subscribed = new Map<string, number>();
  /** Lists' JSON: snapshots share unchanged root objects, so a list is re-encoded only where it changed. */
  private readonly json = new ListJson();
  /** State changes, one at a time; a failure is logged, never thrown at the event loop. */
  private readonly queue = new SerialQueue((err) =>
    this.opts.log.error(
      `internal error while updating the policy: ${errnoCode(err) ?? ''} ${String(err)}`,
    ),
  );
  /** Where each written path led when it entered the policy: later links are not followed. */
  private readonly pins = new LinkPins();
  /** The pins, kept in the state directory so that a restart follows no link anew. */
  private readonly pinsFile: PinsFile;
  /**
   * The last change someone asked for (a grant, a reload, lockdown, an expiry), settled: what
   * answers wait for. Background recomputes (the watcher's) are not in it.
   */
  private asked: Promise<unknown> = Promise.resolve();
  /**
   * What the last load of each group looked at (its reads and include globs), valid or not: the
   * watcher reloads when the files on disk differ from it, whoever loaded last.
   */
  private readonly lastLooks: Record<'policy' | 'grants', LoadLook> = {
    policy: { files: new Map(), globs: [], located: [] },
    grants: { files: new Map(), globs: [], located: [] },
  };
  /** How many loads of the files have begun, in queue order (`reload`'s `reads`). */
  private loadCount = 0;
  /** Settles when the load reading now has noted what it looked at (`readsSettled`). */
  private reading: Promise<void> | undefined;
  /** Whether `asked` has settled (`isFresh`). */
  private askedSettled = true;
  private readonly timer: ExpiryTimer;
  private readonly now: () => number;
  /**
   * Sets the watches a (re)load's roots need before it walks them (the watcher's): a change
   * during the walk is then seen by the walk or reported by a watch. Resolves once they are in
   * place, with a function to call once the new snapshot is in force (until then the watcher
   * keeps them, whatever the snapshot in force plans). Without it, the watcher sets watches
   * after each snapshot and looks again once they are set.
   */
  watchFirst?: (targets: RootWatches) => Promise<() => void>;

  /** `rootsctl status` as the person can run it. */
  get statusCommand(): string {
    return this.opts.statusCommand ?? 'rootsctl status';
  }

  /** `rootsctl SUBCOMMAND` as the person can run it wherever they read it. */
  ctl(subcommand: string): string {
    return `${this.opts.rootsctl ?? 'rootsctl'} ${subcommand}`;
  }

  constructor(private readonly opts: StateOptions) {
    super();
    this.now = opts.now ?? Date.now;
    this.timer = new ExpiryTimer(() => void this.recompute('expiry'));
    this.pinsFile = new PinsFile(opts.stateDir, opts.log);
  }

  /** How many loads of the policy's files have begun: a reader's mark for `reload`'s `reads`. */
  get loads(): number {
    return this.loadCount;
  }

  /** The grants file's path (in the state directory as checked at start). */
  get grantsFile(): string {
    return this.opts.grantsFile;
  }

  /** What the last load of the policy's files, or of the grants file, looked at. */
  lastLook(group: 'policy' | 'grants'): LoadLook {
    return this.lastLooks[group];
  }

  /**
   * Settles once every load that has begun has noted what it looked at, so that `lastLook` is
   * the last load's and not the one before it (a file compared with a load still reading it
   * would be compared with the load before: an edit undone meanwhile went unseen).
   */
  async readsSettled(): Promise<void> {
    while (this.reading !== undefined) await this.reading;
  }

  /** The snapshot in force. */
  get resolved(): ResolvedPolicy {
    return this.current;
  }

  /** Every policy file in force, main first, grants last. */
  get files(): string[] {
    return [...this.base.files, ...this.grants.files].map((f) => f.file);
  }

  /** Include patterns of the policy in force (for the watch plan). */
  get includePatterns(): string[] {
    return this.base.includePatterns;
  }

  /** Load everything for the first time. Never throws for a bad policy: it serves nothing. */
  async start(): Promise<void> {
    const since = await ignoreMissing(readFile(join(this.opts.stateDir, LOCKDOWN_FILE), 'utf8'));
    this.lockdown = since !== undefined;
    if (since !== undefined) {
      this.opts.log.warn(
        `lockdown is on (since ${since.trim() || 'an unknown time'}): every list is empty and every access refused until \`${this.ctl('unlock')}\``,
      );
    }
    await this.pinsFile.load(this.pins);
    await this.reload({ policy: true, grants: true }, 'start');
  }

  /**
   * Re-read policy files and/or the grants file, then recompute. `repin` (the person asked:
   * `rootsctl reload`, SIGHUP) follows every symlink on the policy's paths as it is now.
   * A `background` reload (the watcher saw a file change) is not waited for by answers.
   * `reads`: files the caller has just read (the watcher, comparing bytes), loaded as read
   * unless another load ran since they were read (`loadsBefore`, taken from `loads` before the
   * read): that load may have seen a later state of the files (a delete, say, then answered to
   * `rootsctl reload`), and older bytes loaded after it would bring the old policy back.
   * `fromSnapshot` (an edit the watcher saw): the entries the edit left as they were keep their
   * expansions, as after a directory change, so the edit's push is not held behind a walk of
   * everything (most of the time from the settle window's end to the push); everything is then
   * walked again in the background, so an edit still looks at the disk afresh, catching what
   * no watch reports (a link outside every root re-pointed on the way to a deny).
   */
  reload(
    what: { policy?: boolean; grants?: boolean; repin?: boolean; fromSnapshot?: boolean },
    reason: string,
    background = false,
    reads?: { files: Map<string, PolicyFileRead>; loadsBefore: number },
  ): Promise<{ ok: boolean }> {
    return this.enqueue(background, async () => {
      const started = performance.now();
      if (what.repin) this.pins.clear();
      const ctx = this.context();
      const current = reads !== undefined && reads.loadsBefore === this.loadCount;
      this.loadCount++;
      const loadCtx = current ? { ...ctx, fs: withReads(ctx.fs, reads.files) } : ctx;
      let doneReading = () => {};
      this.reading = new Promise<void>((resolve) => (doneReading = resolve));
      try {
        if (what.policy) {
          const read: Fingerprint = new Map();
          const loaded = await loadPolicySources(this.opts.configFile, noted(loadCtx, read));
          this.lastLooks.policy = { files: read, globs: loaded.globbed, located: loaded.located };
          this.baseErrors = loaded.errors;
          if (loaded.errors.length === 0) {
            this.base = loaded;
            this.policyEverValid = true;
          } else this.reportErrors(loaded.errors, 'policy');
        }
        if (what.grants) {
          const read: Fingerprint = new Map();
          const loaded = await this.loadGrants(noted(loadCtx, read));
          this.lastLooks.grants = { files: read, globs: [], located: loaded.located };
          this.grantsErrors = loaded.errors;
          // Fail closed: the daemon writes the grants file whole, so one that does not load is
          // not its own, and a grant it cannot vouch for grants nothing (no "last good" grants).
          this.grants = loaded.errors.length === 0 ? loaded : EMPTY;
          if (loaded.errors.length > 0) this.reportErrors(loaded.errors, 'grants');
        }
      } finally {
        this.reading = undefined;
        doneReading();
      }
      this.errors = [...this.baseErrors, ...this.grantsErrors];
      const took =
        (what.policy && this.baseErrors.length === 0) ||
        (what.grants && this.grantsErrors.length === 0);
      // loadedAt says when the policy in force was read, not when a rejected edit was: a reload of
      // both files whose policy was refused took only the grants, and keeps it.
      const policyTook = what.policy ? this.baseErrors.length === 0 : took;
      if (policyTook || this.loadedAt.getTime() === 0) this.loadedAt = new Date(ctx.now);
      // The roots' watches are set before the walk (watchFirst), so nothing is walked twice.
      const release = this.watchFirst
        ? await this.watchFirst(await watchTargets([...this.base.files, ...this.grants.files], ctx))
        : undefined;
      try {
        await this.resolveNow(ctx, what.fromSnapshot ? [] : undefined, release);
      } finally {
        release?.();
      }
      if (what.fromSnapshot && took) void this.recompute('after an edit: everything again', true);
      const ms = (performance.now() - started).toFixed(1);
      const servers = this.current.serverNames();
      const roots = servers.reduce((n, s) => n + this.current.roots(s).length, 0);
      const inForce = `${this.files.length} file${this.files.length === 1 ? '' : 's'}, ${servers.length} named server${servers.length === 1 ? '' : 's'}, ${roots} root${roots === 1 ? '' : 's'}`;
      if (this.errors.length === 0) {
        this.opts.log.info(`policy loaded (${reason}): ${inForce} in ${ms} ms`, {
          files: this.files,
        });
      } else {
        this.opts.log.warn(
          `policy not loaded (${reason}): ${this.errors.length} error${this.errors.length === 1 ? '' : 's'}; ${this.keeping()} (${inForce}, loaded ${this.loadedAt.toISOString()})`,
          // The files with the errors, and apart from them what serves: one list named `files`
          // read as the broken files when it held only what was in force (the grants file).
          { invalid: [...new Set(this.errors.map((e) => e.file))], serving: this.files },
        );
      }
      this.emit('loaded', reason, this.files, this.errors);
      return { ok: this.errors.length === 0 };
    });
  }

  /**
   * Resolve the policy in force again (directories changed, an expiry, a rescan). A `background`
   * recompute (directory changes, rescans) is not waited for by answers: the snapshot in force
   * keeps answering until the new one is complete, and then is replaced whole. `changed` names
   * the paths that changed since the snapshot in force: only what they can affect is expanded
   * again (without it, everything is).
   */
  recompute(reason: string, background = false, changed?: string[]): Promise<void> {
    return this.enqueue(background, async () => {
      this.opts.log.debug(`recomputing (${reason})`);
      const started = performance.now();
      await this.resolveNow(this.context(), changed);
      const what = changed === undefined ? 'everything' : `${changed.length} changed paths`;
      this.opts.log.debug(
        `recomputed (${reason}, ${what}) in ${(performance.now() - started).toFixed(1)} ms`,
      );
    });
  }

  /**
   * Before any answer: if the clock has passed the next expiry (a sleeping machine), recompute
   * first; else wait for the changes someone asked for, so that a client sees its own change in
   * every answer after its reply. Background recomputes are not waited for: one server churning
   * a large tree must not stall every other server's answers.
   */
  async fresh(): Promise<void> {
    const next = this.current.nextExpiry;
    if (next !== undefined && this.now() >= next) await this.recompute('expiry passed');
    else await this.asked;
  }

  /**
   * Whether `fresh()` has nothing to wait for: no expiry passed, and the last change asked for
   * has settled (known once its settling has run; until then, false). An answer may then be made
   * in the same turn as its request.
   */
  isFresh(): boolean {
    const next = this.current.nextExpiry;
    return this.askedSettled && !(next !== undefined && this.now() >= next);
  }

  /**
   * Turn lockdown on or off; it survives restarts (a file in the state directory). Turned on
   * when the file cannot be written, it resolves with the notice that says so.
   */
  setLockdown(on: boolean): Promise<string | undefined> {
    return this.enqueue(false, async () => {
      let unsaved: string | undefined;
      const file = join(this.opts.stateDir, LOCKDOWN_FILE);
      // Lockdown is the emergency stop: it takes effect whether or not it can be saved (a full
      // disk, a state directory made read-only); only surviving a restart depends on the file.
      if (on) this.lockdown = true;
      try {
        // Not into a directory put in the state directory's place (daemon/state-dir.ts).
        await this.opts.verifyStateDir?.();
        if (on) {
          await mkdir(this.opts.stateDir, { recursive: true, mode: 0o700 });
          await writeFile(file, `${new Date(this.now()).toISOString()}\n`, { mode: 0o600 });
        } else {
          await rm(file, { force: true });
        }
      } catch (err) {
        // A refused state directory says why in its own words; a system error by its code.
        const why = err instanceof RootsError ? err.message : (errnoCode(err) ?? String(err));
        if (!on) {
          throw err instanceof RootsError
            ? new RootsError(err.code, `lockdown stays on: ${err.message}`, { cause: err })
            : new RootsError(
                'INTERNAL',
                `cannot remove the lockdown mark ${file} (${why}), so lockdown stays on: remove it by hand, then unlock again`,
                { cause: err },
              );
        }
        unsaved = `lockdown is on, but cannot be saved in ${file} (${why}): a restart would end it`;
        this.opts.log.error(unsaved);
      }
      this.lockdown = on;
      this.emit('lockdown', on);
      this.opts.log.warn(
        on ? 'lockdown on: every list is empty, every access refused' : 'lockdown off',
      );
      this.diff();
      return unsaved;
    });
  }

  /** The server's list as sent (empty during lockdown). */
  roots(server: string): Root[] {
    return this.lockdown ? [] : this.current.roots(server);
  }

  /** The server's list as ready-to-send JSON bytes, made once per list from kept runs. */
  rootsJson(server: string): readonly Buffer[] {
    return this.json.parts(this.roots(server));
  }

  /** Remember a name that was asked about, so that its changes bump the revision. */
  noteAsked(server: string): void {
    if (this.lists.has(server)) return;
    this.recent.add(server);
    if (this.recent.size > RECENT_NAMES) {
      const oldest = this.recent.values().next().value!;
      this.recent.delete(oldest);
      if (!this.subscribed.has(oldest)) this.lists.delete(oldest);
    }
    this.lists.set(server, this.roots(server));
  }

  /** Count a subscription to a server (names with subscribers are always diffed). */
  subscribe(server: string): void {
    this.subscribed.set(server, (this.subscribed.get(server) ?? 0) + 1);
    if (!this.lists.has(server)) this.lists.set(server, this.roots(server));
  }

  unsubscribe(server: string): void {
    const n = (this.subscribed.get(server) ?? 0) - 1;
    if (n > 0) this.subscribed.set(server, n);
    else this.subscribed.delete(server);
  }

  /** The access decision; refuses everything during lockdown. */
  async check(server: string, path: string, access: Access): Promise<CheckResult> {
    await this.fresh();
    if (this.lockdown) {
      return {
        allowed: false,
        access,
        reason: `lockdown is on: every access is refused until \`${this.ctl('unlock')}\``,
        refusal: 'lockdown',
      };
    }
    return this.current.check(server, path, access);
  }

  explain(server: string, writers = false): ExplainResult {
    // The tool rules ride along for mcp-roots-proxy's enforcement (docs/protocol.md, policy/explain).
    const result = {
      ...this.current.explain(server),
      tools: this.current.tools(server),
      // How the proxy starts the server, and in which sandbox (README, Sandboxing).
      ...this.current.launch(server),
      ...coverageOf([...this.base.files, ...this.grants.files], server),
      // Kept under lockdown too: what other servers wrote before it is still there.
      ...(writers && { writers: this.current.writers(server) }),
    };
    if (!this.lockdown) return result;
    // Nothing at all: no roots, and no `sandbox.read` or `write` path (the sandbox stays).
    const { sandbox } = result;
    return {
      ...result,
      roots: [],
      ...(sandbox && { sandbox: confinementOnly(sandbox) }),
    };
  }

  /** Stop the expiry timer; resolves once the pins file is written. */
  close(): Promise<void> {
    this.timer.clear();
    return this.pinsFile.close();
  }

  /** Queue a state change; unless it is `background`, answers from now on wait for it. */
  private enqueue<T>(background: boolean, op: () => Promise<T>): Promise<T> {
    const run = this.queue.run(op);
    if (!background) {
      const asked = run.catch(() => {});
      this.asked = asked;
      this.askedSettled = false;
      void asked.then(() => {
        if (this.asked === asked) this.askedSettled = true;
      });
    }
    return run;
  }

  private context(): PolicyContext {
    return {
      home: this.opts.home,
      env: this.opts.env,
      now: this.now(),
      fs: this.opts.fs,
      stateDir: this.opts.stateDir,
      runtimeDir: this.opts.runtimeDir,
      installDir: packageRoot(),
    };
  }

  /** `swapped`: called once the new snapshot is in force, before anyone hears of it. */
  private async resolveNow(
    ctx: PolicyContext,
    changed?: string[],
    swapped?: () => void,
  ): Promise<void> {
    const files = [...this.base.files, ...this.grants.files];
    const next = await resolvePolicy(files, ctx, {
      includePatterns: this.base.includePatterns,
      extraPolicyFiles: [this.opts.configFile, this.opts.grantsFile],
      pins: this.pins,
      // Only the same files can reuse what the snapshot in force expanded.
      ...(this.current?.files.join('\0') === files.map((f) => f.file).join('\0')
        ? { previous: this.current, ...(changed !== undefined ? { changed } : {}) }
        : {}),
    });
    // The lists the diff below compares are built before the snapshot takes over, in slices:
    // until then the snapshot in force answers, and answers are not held behind a big list.
    await next.prepare(new Set([...this.lists.keys(), ...next.serverNames()]));
    this.current = next;
    swapped?.();
    this.warnings = [...this.base.warnings, ...this.grants.warnings, ...this.current.warnings];
    this.sha256 = combinedHash(files.map((f) => f.sha256));
    this.timer.set(this.current.nextExpiry, this.now);
    this.pinsFile.save(this.pins);
    // A name the policy just started naming had the empty list before (deny by default).
    for (const name of this.current.serverNames())
      if (!this.lists.has(name)) this.lists.set(name, []);
    this.diff();
    this.emit('resolved', this.current);
  }

  /** Compare every diffed name's list with what was last sent; one revision for all changes. */
  private diff(): void {
    const literal = new Set(this.current.serverNames());
    const changes: Change[] = [];
    for (const [server, before] of this.lists) {
      const roots = this.roots(server);
      // A name no longer named, subscribed or asked about is diffed one last time, then
      // forgotten: a revoked grant of a server no policy names still logs its roots going.
      if (!literal.has(server) && !this.subscribed.has(server) && !this.recent.has(server)) {
        this.lists.delete(server);
      } else if (roots !== before) this.lists.set(server, roots);
      if (roots === before) continue;
      // A list updated from the one last sent says what it added and removed: no need to
      // compare 100,000 roots to find the one that changed.
      const change = this.lockdown ? undefined : this.current.rootsChange?.(server);
      if (change !== undefined && change.from === before) {
        if (change.added.length === 0 && change.removed.length === 0) continue;
        // Such an update only adds and removes: every other root is the same object as before.
        const { added, removed } = change;
        const parts = this.json.parts(roots);
        changes.push({ server, roots, parts, added, removed, changed: [] });
        continue;
      }
      if (this.json.same(roots, before)) continue;
      const parts = this.json.parts(roots);
      // A list from or to nothing (a server named for the first time) needs no comparison.
      if (before.length === 0 || roots.length === 0) {
        const added = roots.map((r) => r.uri);
        const removed = before.map((r) => r.uri);
        changes.push({ server, roots, parts, added, removed, changed: [] });
        continue;
      }
      const old = new Map(before.map((r) => [r.uri, r]));
      const now = new Set(roots.map((r) => r.uri));
      changes.push({
        server,
        roots,
        parts,
        added: [...now].filter((u) => !old.has(u)),
        removed: [...old.keys()].filter((u) => !now.has(u)),
        changed: roots.flatMap((r) => {
          const was = old.get(r.uri);
          return was === undefined || sameRoot(was, r) ? [] : [r.uri];
        }),
      });
    }
    if (changes.length === 0) return;
    this.revision++;
    changes.sort((a, b) => compareUtf8(a.server, b.server));
    this.emit('changed', this.revision, changes);
  }

  /** The grants file, unless the state directory is no longer the one checked at start. */
  private async loadGrants(ctx: PolicyContext): Promise<LoadedSources> {
    try {
      await this.opts.verifyStateDir?.();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return { ...EMPTY, errors: [{ file: this.opts.grantsFile, line: 1, column: 1, message }] };
    }
    return loadGrantsSource(this.opts.grantsFile, ctx);
  }

  /** What serves while the policy is invalid: the last good one, or none since start. */
  private keeping(): string {
    return this.policyEverValid
      ? 'still serving the last good policy'
      : 'no policy was valid since start, so every server has no roots until it is fixed';
  }

  private reportErrors(errors: PolicyError[], what: string): void {
    const first = errors[0]!;
    const keeping = what === 'grants' ? 'no grants serve until it is fixed' : this.keeping();
    this.opts.log.error(
      `${what} file invalid, ${keeping}: ${first.file}:${first.line}:${first.column}: ${first.message}${errors.length > 1 ? ` (and ${errors.length - 1} more; see \`${this.statusCommand}\`)` : ''}`,
    );
  }
}

/** Whether two roots of one URI say the same (the same object, or equal name and `_meta`). */
function sameRoot(a: Root, b: Root): boolean {
  return a === b || (a.name === b.name && JSON.stringify(a._meta) === JSON.stringify(b._meta));
}
