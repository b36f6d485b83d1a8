/**
 * Which server runs behind the host, and when it must be replaced: the first start, and a restart
 * (server-swap.ts) whenever a change of the roots or of the policy's `launch` or `sandbox` changes
 * what would be started (command line, environment, working directory, or the sandbox's mounts).
 * Bursts of changes make one restart.
 *
 * A sandboxed server is also restarted when a denied path appears inside its roots (deny-watch.ts),
 * because its mounts hide only what existed when it started. A path denied for reading stops the
 * old server at once (its calls in flight fail), without settling or planning first: every moment
 * it runs, it can read the new path.
 *
 * And it is planned again when one of the roots it runs with expires or turns read-only
 * (root-expiry.ts), by the proxy's own clock: the daemon may be down or stuck at that moment, and
 * nobody else ends a mount.
 */
import { realpath } from 'node:fs/promises';
import { ExpiryTimer } from '../common/expiry-timer.js';
import { confinementOnly, type SandboxRule } from '../common/types.js';
import { DenyWatch, type DeniedPath, type WatchedPath } from './deny-watch.js';
import { setAsidePlanted, setAsideUnnamed } from './git-plant.js';
import { extraPathDenies } from './sandbox-mounts.js';
import { IncludeWatch } from './include-watch.js';
import {
  launchTemplate,
  planLaunch,
  sandboxWanted,
  type LaunchPlan,
  type PlanInput,
} from './launch-plan.js';
import { hasPlaceholders } from './launch.js';
import type { ProxyLogger } from './log.js';
import { spawnDifference } from './plan-diff.js';
import { nextChange } from './root-expiry.js';
import { takesAccessAway, type Reach } from './sandbox-reach.js';
import type { ServerEndpoint, SwapPlan } from './server-swap.js';
import { cannotStart } from './cannot-start.js';
import { EXIT_GRACE_MS, startServerProcess, type ServerProcess } from './server-process.js';
import { startStandIn, type StandIn } from './stand-in.js';

/** A plan, the count of denied paths seen when it was made, and what it was made from. */
interface Planned {
  plan: LaunchPlan;
  denials: number;
  reach: Reach;
}

/** What runs now. */
type Running = { key: string } & Planned &
  ({ kind: 'process'; process: ServerProcess } | { kind: 'stand-in'; standIn: StandIn });

/** Why the supervisor looks again at what should run. */
type Change =
  | { kind: 'roots' }
  | { kind: 'rules' }
  | { kind: 'denied'; denied: DeniedPath }
  | { kind: 'layout' }
  | { kind: 'expired' };

export interface SupervisorOptions {
  server: string;
  version: string;
  log: ProxyLogger;
  /** The plan's inputs as they are now. */
  planInput: () => PlanInput;
  /** How long calls in flight may take to finish before a restart fails them (default 5 s). */
  drainMs?: number;
  /** How long to wait for more changes before restarting (default 100 ms). */
  settleMs?: number;
  /** The most directories watched for denied paths in a sandboxed server's roots. */
  maxWatchedDirs?: number;
}

/** The router's seam for a restart. */
export interface Swappable {
  swapServer(plan: SwapPlan): Promise<void>;
}

/** How many times the first start plans again for changes that came while it planned. */
const FIRST_PLAN_TRIES = 4;

/** How many layouts a sandboxed start tries when its mounts moved while bwrap laid them out. */
const LAYOUT_TRIES = 3;

/**
 * After that, the wait before the next try (doubled for each refusal in a row, up to the most): a
 * process that keeps moving paths under bwrap keeps the server down, but only while it does.
 */
const LAYOUT_RETRY_MS = 1000;
const LAYOUT_RETRY_MAX_MS = 60_000;

const keyOf = (plan: LaunchPlan): string =>
  plan.kind === 'start' ? plan.key : `${plan.kind}\0${plan.reason}`;

/**
 * The sandbox's `read` and `write` paths, canonical, with the denies that could lie in each:
 * watched for denied paths that appear, as the roots are (sandbox-mounts.ts lays them out alike).
 */
async function extraPaths(sandbox: SandboxRule | undefined): Promise<WatchedPath[]> {
  const out: WatchedPath[] = [];
  const each = [
    ...(sandbox?.read ?? []).map((p) => ({ p, writable: false })),
    ...(sandbox?.write ?? []).map((p) => ({ p, writable: true })),
  ];
  for (const { p, writable } of each) {
    const path = await realpath(p).catch(() => undefined);
    if (path !== undefined)
      out.push({ path, denies: extraPathDenies(sandbox, path, writable), writable });
  }
  return out;
}

export class Supervisor {
  private running: Running | undefined;
  private router: Swappable | undefined;
  private pending: Change[] = [];
  /** When the first of the pending changes came (for the restart's log). */
  private changedAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private again = false;
  private closed = false;
  /** Denied paths seen appearing in the roots so far (a running plan older than one is stale). */
  private denials = 0;
  /** Stops the old server of the restart under way at once (a denied path appeared). */
  private stopNow: AbortController | undefined;
  /**
   * The restart under way: whether a sandbox is on either side, what stops its old server, and
   * what ends the new one's opening and settling (its subscriptions and lists), so that a change
   * during it is planned at once. Only a change that the new server's plan may lack ends them:
   * one before it is planned is in its plan (`start` plans again).
   */
  private swapping:
    | {
        sandboxed: boolean;
        stopNow: AbortController;
        settleNow: AbortController;
        newPlanned: boolean;
      }
    | undefined;
  /** Changes seen so far: a restart's plan made before the latest is stale when it starts. */
  private changes = 0;
  /** Where the sandbox's extra paths led at their first layout in this session. */
  private readonly sandboxPins = new Map<string, string>();
  /**
   * Why another server could write the program at some moment of this session (a grant, an
   * edit, since taken back): the code may have been changed meanwhile, so it is not started
   * again in this session, whatever the policy says now.
   */
  private programExposed: string | undefined;
  /**
   * The sandbox rule of the last plan that wanted a sandbox. A session that started sandboxed
   * stays so: a policy that stops naming the server (its block removed, its file deleted) would
   * otherwise start it again with all of the user's access, the opposite of what removing it
   * meant. Only a new session starts it without one.
   */
  private sandboxed = false;
  /** Whether the server's command takes its roots (`{roots}` and the like: launch.ts). */
  get rootsOnCommandLine(): boolean {
    const template = launchTemplate(this.o.planInput());
    return typeof template !== 'string' && hasPlaceholders(template);
  }

  /** Whether this session's server runs in a sandbox (it stays so once it has). */
  get isSandboxed(): boolean {
    return this.sandboxed;
  }
  /** The policy's last sandbox rule for the server, kept when the policy drops it. */
  private lastRule: SandboxRule | undefined;
  private warnedSandboxKept = false;
  private readonly watch: DenyWatch;
  /** The denied paths in the program's directories (planLaunch's `programWatch`). */
  private readonly program: DenyWatch;
  private readonly includes: IncludeWatch;
  /** Who waits for every change seen so far to be planned, and its restart done (`settled`). */
  private readonly settledWaiters: (() => void)[] = [];
  /** Sandboxed starts refused in a row because their mounts moved, and the next try's timer. */
  private movedRefusals = 0;
  private layoutTimer: NodeJS.Timeout | undefined;
  /** Set for when the next of the running plan's roots expires or turns read-only. */
  private readonly expiry = new ExpiryTimer(() => this.changed({ kind: 'expired' }));

  constructor(private readonly o: SupervisorOptions) {
    const watching = {
      log: o.log,
      onDenied: (d: DeniedPath) => this.onDenied(d),
      // Moved aside before the server is stopped (as for a path denied for reading).
      onPlanted: setAsidePlanted,
      onPlantedUnnamed: setAsideUnnamed,
      ...(o.maxWatchedDirs === undefined ? {} : { maxDirs: o.maxWatchedDirs }),
    };
    this.watch = new DenyWatch(watching);
    // Its program's directories, which it cannot write: only their denied paths.
    this.program = new DenyWatch({ ...watching, gitNotes: false });
    // An include base in a writable root that changed: stopped at once, as for a path denied
    // for reading (include-watch.ts); the new layout mounts it read-only or refuses.
    this.includes = new IncludeWatch({
      onChanged: (path) =>
        this.onDenied({
          path,
          access: 'all',
          why: `an include pattern's directory changed in the roots: ${path}`,
        }),
    });
  }

  /**
   * Start what the plan says now: the server, or a stand-in that says why not. A server that
   * could not be started at all (its command not found) leaves a stand-in too, which tells the
   * host why in answer to its first request (a host shows "connection closed" for a proxy that
   * exits): the status is `firstFailed`, and a change of the policy may start it yet.
   */
  async start(): Promise<ServerEndpoint> {
    // The plan reads the roots and rules as they are now, so what changed before it is in it
    // already. Kept, it would make `follow` plan again: a needless walk of the roots, and a
    // restart if a file that the plan's mounts depend on appeared in between. A change while
    // the plan is made (a root taken away) may be missing from it: plan again, a few times at
    // most; what is left waits for `follow`.
    let planned: Planned;
    for (let tries = 0; ; tries++) {
      this.pending = [];
      this.changedAt = undefined;
      const at = this.changes;
      planned = await this.plan();
      if (this.changes === at || tries === FIRST_PLAN_TRIES) break;
    }
    const { plan } = planned;
    this.logPlan(plan);
    const started = await this.run(planned);
    if ('failed' in started && plan.kind === 'start') this.firstFailed = started.failed;
    else if (plan.kind === 'refuse' && plan.status !== undefined) this.firstFailed = plan.status;
    this.armExpiry();
    return this.endpoint();
  }

  /**
   * Plan again when the next of the running plan's roots expires or turns read-only: the plan
   * then leaves it out or mounts it read-only (run.ts), and a sandboxed server that had it is
   * stopped at once, as for any access taken away. One that passed while the plan was made and
   * the server started is planned again at once.
   */
  private armExpiry(): void {
    this.expiry.set(
      this.closed ? undefined : nextChange(this.running?.reach.roots ?? []),
      Date.now,
    );
  }

  /**
   * The plan for now. For a sandbox, the roots are watched for denied paths first, so that one
   * created while the mounts are laid out is either found by them or reported.
   */
  private async plan(): Promise<Planned> {
    const denials = this.denials;
    const input = { ...this.keptSandbox(this.o.planInput()), sandboxPins: this.sandboxPins };
    let extras: WatchedPath[] = [];
    const watched = sandboxWanted(input) && input.roots !== undefined;
    if (watched) {
      extras = await extraPaths(input.sandbox);
      await this.watch.update(input.roots!, extras);
      await this.includes.update(input.roots!, input.sandbox);
    } else {
      this.watch.close();
      this.program.close();
      this.includes.close();
    }
    // The `write` paths as written and where they lead: the roots they are compared with are
    // canonical (sandbox-reach.ts).
    const writes = [
      ...(input.sandbox?.write ?? []),
      ...extras.flatMap((e) => (e.writable ? [e.path] : [])),
    ];
    const reach = { roots: input.roots ?? [], sandbox: input.sandbox, writes };
    let plan = await planLaunch({ ...input, gitDirs: this.watch.personsGitDirs() });
    // The program's directories are watched for denied files as `read` paths are: one that
    // appeared after the start was readable (an attacker pass: the hiding was laid at the start).
    if (watched && plan.kind === 'start') await this.program.update([], plan.programWatch ?? []);
    else this.program.close();
    const blind = sandboxWanted(input)
      ? (this.watch.blindSpot() ?? this.program.blindSpot())
      : undefined;
    // A sandboxed server whose roots cannot all be watched is not started (deny-watch.ts).
    if (blind !== undefined && plan.kind === 'start' && plan.sandboxed) {
      plan = { kind: 'refuse', reason: `${blind}. It was not started` };
    }
    if (plan.kind === 'refuse' && plan.overlap !== undefined) {
      this.programExposed ??= plan.overlap;
    } else if (plan.kind === 'start' && plan.sandboxed && this.programExposed !== undefined) {
      plan = {
        kind: 'refuse',
        reason: `another server could write this server's program earlier in this session (${this.programExposed}), and may have changed it since, so it is not started again in this session: check the program, then start a new session`,
      };
    }
    return { plan, denials, reach };
  }

  /**
   * `input`, with the sandbox of this session kept when the policy no longer asks for one, and
   * the policy's last rule kept when it drops it (with `--sandbox` too: its `network: false`
   * must not turn into the default's network), without its `read` and `write` paths.
   */
  private keptSandbox(input: PlanInput): PlanInput {
    if (input.sandbox !== undefined) {
      this.lastRule = input.sandbox;
      this.warnedSandboxKept = false;
    }
    if (sandboxWanted(input)) this.sandboxed = true;
    // Sandboxed by `--sandbox` alone, with no rule from the policy yet: nothing to keep.
    if (!this.sandboxed || input.sandbox !== undefined || this.lastRule === undefined) return input;
    if (!this.warnedSandboxKept) {
      this.warnedSandboxKept = true;
      this.o.log.warn(
        'the policy no longer gives a sandbox rule for this server; a session that started sandboxed keeps its sandbox and last rule: start a new session to run it as the policy now says',
      );
    }
    // Its confinement, not its paths: a server the policy no longer names gets no roots, and no
    // `read` or `write` path either.
    return { ...input, sandbox: confinementOnly(this.lastRule) };
  }

  /** Restart on changes from now on, through `router`. */
  follow(router: Swappable): void {
    this.router = router;
    const urgent = this.pending.some((c) => c.kind === 'denied' && c.denied.access === 'all');
    if (urgent) void this.replan();
    else if (this.pending.length > 0) this.schedule();
  }

  /** The roots changed: restart if that changes what would run (after the burst settles). */
  onRoots(): void {
    this.changed({ kind: 'roots' });
  }

  /** The policy's `launch` or `sandbox` changed: restart if that changes what would run. */
  onRules(): void {
    this.changed({ kind: 'rules' });
  }

  /**
   * A denied path appeared in a sandboxed server's roots. Denied for writing: its mount would be
   * read-only, a restart as for any change. Denied for reading: stop the server now.
   */
  private onDenied(denied: DeniedPath): void {
    if (this.closed) return;
    // Either way the running server's mounts are stale, even if a new plan looks the same: an
    // editor's save replaces a protected file, which detaches its read-only mount in the sandbox.
    this.denials++;
    if (denied.access === 'write') {
      this.o.log.info(`a path denied for writing appeared in the roots: ${denied.path}`);
      return this.changed({ kind: 'denied', denied });
    }
    this.o.log.warn(
      `${denied.why ?? `a denied path appeared in the roots: ${denied.path}`}; stopping the server now`,
    );
    if (this.pending.length === 0) this.changedAt = performance.now();
    this.pending.push({ kind: 'denied', denied });
    this.changes++;
    this.stopNow?.abort();
    this.endNewServerWait();
    if (this.router === undefined) return;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    void this.replan();
  }

  /**
   * The last layouts' mounts all moved under bwrap: the server is refused for now, and laid out
   * again later rather than only on the next change of its roots or rules (by then the paths may
   * be back as planned, and the plan would not differ from the refusal's).
   */
  private layOutLater(): void {
    const ms = Math.min(LAYOUT_RETRY_MAX_MS, LAYOUT_RETRY_MS * 2 ** this.movedRefusals++);
    this.o.log.warn(
      `the sandbox did not come out as laid out ${LAYOUT_TRIES} times in a row: is something changing paths in its roots whenever it starts (another server sharing them)? Trying again in ${ms / 1000} s`,
    );
    clearTimeout(this.layoutTimer);
    this.layoutTimer = setTimeout(() => {
      this.layoutTimer = undefined;
      this.changed({ kind: 'layout' });
    }, ms);
    this.layoutTimer.unref();
  }

  private changed(change: Change): void {
    if (this.closed) return;
    if (this.pending.length === 0) this.changedAt = performance.now();
    this.pending.push(change);
    this.changes++;
    // A change while a sandboxed server is being replaced: the old one is stopped at once,
    // whatever the swap is doing (finishing calls, giving its lists page by page). Whether the
    // change takes anything away is known only once it is planned, and the old one must not
    // keep its mounts that long.
    if (this.swapping?.sandboxed === true) {
      this.swapping.stopNow.abort();
      this.endNewServerWait();
    }
    if (this.router !== undefined) this.schedule();
  }

  /** A change during a restart, once the new server is planned: it is not kept waiting for. */
  private endNewServerWait(): void {
    if (this.swapping?.newPlanned === true) this.swapping.settleNow.abort();
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.replan();
    }, this.o.settleMs ?? 100);
  }

  /** The process that runs now, if it is one. */
  /** The status of a first start that failed (the server could not be started), if it did. */
  firstFailed: number | undefined;

  get process(): ServerProcess | undefined {
    return this.running?.kind === 'process' ? this.running.process : undefined;
  }

  /** Stop whatever runs and start nothing more. */
  stop(): void {
    this.closed = true;
    this.wakeSettled();
    clearTimeout(this.layoutTimer);
    this.expiry.clear();
    this.watch.close();
    this.program.close();
    this.includes.close();
    if (this.timer !== undefined) clearTimeout(this.timer);
    const r = this.running;
    if (r?.kind === 'process') r.process.stop();
    else r?.standIn.close();
  }

  /** Pass a signal to the server process (a stand-in just ends). */
  signal(signal: NodeJS.Signals): void {
    const r = this.running;
    if (r?.kind === 'process') r.process.kill(signal);
    else r?.standIn.close();
  }

  private endpoint(): ServerEndpoint {
    const r = this.running!;
    return r.kind === 'process' ? r.process : r.standIn;
  }

  private logPlan(plan: LaunchPlan): void {
    const { log } = this.o;
    if (plan.kind === 'refuse') log.error(`the server is not started: ${plan.reason}`);
    else if (plan.kind === 'wait') log.info(`the server is not started yet: ${plan.reason}`);
    else {
      for (const w of plan.warnings) log.warn(w);
      for (const n of plan.notes ?? []) log.info(n);
      log.info(`starting the server${plan.sandboxed ? ' in its sandbox' : ''}`);
    }
  }

  /**
   * Start `plan`'s server, or a stand-in; a command that cannot start gets a refusing stand-in. A
   * sandbox whose mounts moved while bwrap laid them out (sandbox-start.ts) is laid out again from
   * what the paths are now, a few times at most: a person's rename at that moment, or a swap made
   * to redirect a mount, which the new layout sees as the link it is.
   */
  private async run(first: Planned): Promise<{ ok: true } | { failed: number }> {
    for (let planned = first, tries = 1; ; tries++) {
      const { plan, denials, reach } = planned;
      const key = keyOf(plan);
      if (plan.kind !== 'start') {
        const standIn = startStandIn(this.o.server, this.o.version, plan);
        this.running = { kind: 'stand-in', key, plan, denials, reach, standIn };
        return { ok: true };
      }
      const started = await startServerProcess(plan.spawn, this.o.log);
      if (!('failed' in started)) {
        this.running = { kind: 'process', key, plan, denials, reach, process: started };
        this.movedRefusals = 0;
        return { ok: true };
      }
      if (started.moved === true && tries < LAYOUT_TRIES && !this.closed) {
        this.o.log.warn('laying the sandbox out again from the paths as they are now');
        planned = await this.plan();
        this.logPlan(planned.plan);
        continue;
      }
      if (started.moved === true) this.layOutLater();
      const reason = cannotStart(plan.spawn.command, started.reason, started.failed);
      const standIn = startStandIn(this.o.server, this.o.version, { kind: 'refuse', reason });
      this.running = { kind: 'stand-in', key, plan, denials, reach, standIn };
      return started;
    }
  }

  private async replan(): Promise<void> {
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    try {
      do {
        this.again = false;
        const changes = this.pending;
        const changedAt = this.changedAt;
        this.pending = [];
        await this.restartIfChanged(changes, changedAt);
      } while (this.again && !this.closed);
    } finally {
      this.busy = false;
      this.armExpiry();
      this.wakeSettled();
    }
  }

  /**
   * Resolves once every change seen so far is planned and the restart it made, if any, is done:
   * a call the person allowed goes on only then, or it reaches the old server, whose command line
   * lacks the new root (`{roots}`), and is refused by it.
   */
  settled(): Promise<void> {
    if (this.idle()) return Promise.resolve();
    return new Promise((resolve) => this.settledWaiters.push(resolve));
  }

  private idle(): boolean {
    return (
      this.closed ||
      this.router === undefined ||
      (this.pending.length === 0 && this.timer === undefined && !this.busy)
    );
  }

  private wakeSettled(): void {
    if (this.idle()) for (const wake of this.settledWaiters.splice(0)) wake();
  }

  private async restartIfChanged(changes: Change[], changedAt?: number): Promise<void> {
    const old = this.running;
    if (this.closed || old === undefined) return;
    // A denied path appeared since the running server's mounts were laid out: it restarts even if
    // the new plan looks the same; denied for reading, it is stopped before anything else.
    const stale = old.kind === 'process' && old.denials < this.denials;
    const urgent = stale && changes.some((c) => c.kind === 'denied' && c.denied.access === 'all');
    // Counted before planning: a change that comes while the plan is made makes it stale.
    const plannedAt = this.changes;
    const wasSandboxed = old.kind === 'process' && old.plan.kind === 'start' && old.plan.sandboxed;
    const stopNow = new AbortController();
    // From here a change aborts a sandboxed old instance, the planning included.
    this.swapping = {
      sandboxed: wasSandboxed,
      stopNow,
      settleNow: new AbortController(),
      newPlanned: false,
    };
    const swapping = this.swapping;
    try {
      await this.replace(old, changes, changedAt, { stale, urgent, plannedAt, wasSandboxed });
    } finally {
      if (this.swapping === swapping) this.swapping = undefined;
    }
  }

  private async replace(
    old: Running,
    changes: Change[],
    changedAt: number | undefined,
    at: { stale: boolean; urgent: boolean; plannedAt: number; wasSandboxed: boolean },
  ): Promise<void> {
    const { stale, urgent, plannedAt, wasSandboxed } = at;
    const swapping = this.swapping!;
    const { stopNow } = swapping;
    let next: Planned | undefined;
    if (!urgent) {
      next = await this.plan();
      if (this.closed) return;
      // A refused start keeps its plan's key; a try again of its layout starts it all the same.
      const retry = changes.some((c) => c.kind === 'layout');
      if (!stale && !retry && keyOf(next.plan) === old.key) {
        // What it runs with now, as the plan would start it: a root whose expiry changes nothing
        // that is started (no sandbox, no `{roots}`) is not timed again (armExpiry).
        old.reach = next.reach;
        if (changes.some((c) => c.kind === 'rules')) {
          this.o.log.info(
            'the policy changed the server’s launch or sandbox rules, but not what it is started with: no restart',
          );
        }
        return;
      }
    }
    const reason = stale ? deniedReason(changes) : describe(changes, old, next!);
    this.o.log.info(`restarting the server: ${reason}`);
    // A sandboxed server keeps what its mounts give it for as long as it runs: one whose access
    // is taken away is stopped at once (its calls in flight fail, its lists are not read), and
    // the new one starts only once the old one has exited, so that no descriptor or socket
    // passes from the one to the other (sandbox-reach.ts).
    // Into a sandbox from none is the widest narrowing there is: the old one must not hand the
    // new one anything either.
    const willBe = next?.plan.kind === 'start' && next.plan.sandboxed;
    const sandboxed = wasSandboxed || willBe;
    swapping.sandboxed = sandboxed;
    // A path denied since its mounts were laid out (for writing: an editor's save replaced a
    // protected file, and its read-only mount no longer covers the new one) takes access away
    // as well: the old server must not write it while its lists are read.
    const takesAway =
      !urgent &&
      old.kind === 'process' &&
      (wasSandboxed ? stale || takesAccessAway(old.reach, next!.reach) : willBe);
    if (takesAway) this.o.log.info('the change takes access away: stopping the old server at once');
    if (urgent || takesAway) stopNow.abort();
    this.stopNow = stopNow;
    try {
      await this.router!.swapServer({
        reason,
        sequential: sandboxed,
        ...(changedAt === undefined ? {} : { changedAt }),
        drainMs: this.o.drainMs ?? 5000,
        stopNow: stopNow.signal,
        settleNow: swapping.settleNow.signal,
        log: this.o.log,
        stopOld: async () => {
          if (old.kind === 'stand-in') return old.standIn.close();
          if (stopNow.signal.aborted) old.process.kill('SIGKILL');
          else {
            old.process.serverIn.end();
            old.process.stop(EXIT_GRACE_MS, false);
          }
          const status = await old.process.status;
          this.o.log.debug(`the old server exited with status ${status}`);
        },
        start: async () => {
          // A change since the plan was made (a root taken away during the drain): plan again,
          // so that the new server never starts with what the policy no longer gives.
          // From here a change may be missing from the new server's plan.
          swapping.newPlanned = true;
          // A sandboxed server is laid out again now that the old instance has exited: planned
          // while it ran, the layout checked paths it could then swap for links (a protected
          // file's directory turned into a link to another root), which bwrap would follow.
          if (next === undefined || sandboxed || this.changes !== plannedAt)
            next = await this.plan();
          const { plan } = next;
          if (this.closed) {
            // The host left during the restart: an ended stand-in ends the session.
            const gone = startStandIn(
              this.o.server,
              this.o.version,
              plan.kind === 'start'
                ? { kind: 'refuse', reason: 'the host closed the session' }
                : plan,
            );
            gone.close();
            return gone;
          }
          this.logPlan(plan);
          await this.run(next);
          return this.endpoint();
        },
      });
    } finally {
      if (this.stopNow === stopNow) this.stopNow = undefined;
    }
  }
}

/** Why a restart for a denied path happens, in words. */
function deniedReason(changes: Change[]): string {
  const paths = (access: string) =>
    changes.flatMap((c) =>
      c.kind === 'denied' && c.denied.access === access ? [c.denied.path] : [],
    );
  const shown = (ps: string[]) => ps.slice(0, 3).join(', ') + (ps.length > 3 ? ', …' : '');
  // Stopped for a reason of its own (a plant moved aside, a code entry replaced, a watch lost):
  // that reason, not "a denied path appeared", which sent the host to call again into EROFS.
  const whys = changes.flatMap((c) => (c.kind === 'denied' && c.denied.why ? [c.denied.why] : []));
  if (whys.length > 0 && whys.length === paths('all').length) {
    return `${whys[0]}${whys.length > 1 ? ` (and ${whys.length - 1} more)` : ''}`;
  }
  const [all, write] = [paths('all'), paths('write')];
  const what =
    all.length > 0
      ? `a denied path appeared in its roots (${shown(all)})`
      : write.length > 0
        ? `a path denied for writing appeared in its roots (${shown(write)})`
        : 'a denied path appeared in its roots while it was being restarted';
  return `${what}; its sandbox hides it only from a new start`;
}

/** Why a restart happens, in words. */
function describe(changes: Change[], old: Running, next: Planned): string {
  const { plan } = next;
  // What the running server was planned with against the new plan, not the daemon's last list
  // against this one: after a reconnect every root of the list is new to the link.
  const before = new Set(old.reach.roots.map((r) => r.uri));
  const after = new Set(next.reach.roots.map((r) => r.uri));
  const added = [...after].filter((u) => !before.has(u));
  const removed = [...before].filter((u) => !after.has(u));
  const parts = [
    ...added.map((u) => `+${decodeURI(u.replace(/^file:\/\//, ''))}`),
    ...removed.map((u) => `-${decodeURI(u.replace(/^file:\/\//, ''))}`),
  ];
  const expired = changes.some((c) => c.kind === 'expired');
  const what =
    parts.length > 0
      ? `its roots changed (${parts.join(', ')})${expired ? ': a root or grant it was given expired' : ''}`
      : changes.every((c) => c.kind === 'layout')
        ? 'its sandbox is laid out again'
        : expired
          ? 'a root or grant it was given expired or turned read-only'
          : `what it is started with changed`;
  if (old.kind === 'stand-in' && plan.kind === 'start') return `${what}; it can start now`;
  if (plan.kind !== 'start') return `${what}; it cannot run now: ${plan.reason}`;
  if (old.plan.kind !== 'start' || old.plan.sandboxed !== plan.sandboxed) return what;
  const differ = spawnDifference(old.plan.spawn, plan.spawn, plan.sandboxed);
  const cause = changes.some((c) => c.kind === 'rules')
    ? 'the policy’s launch or sandbox'
    : 'its roots’ read-only flags or denies';
  return parts.length > 0 ? what : `${what} (${cause}): ${differ.join(', ')}`;
}
