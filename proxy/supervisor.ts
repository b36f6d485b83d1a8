/**
 * Which server runs behind the host, and when it must be replaced: the first start, and a restart
 * (server-swap.ts) whenever the roots change what would be started (command line, environment,
 * working directory, or the sandbox's mounts). Bursts of changes make one restart.
 */
import type { RootsChange } from './daemon-link.js';
import { planLaunch, type LaunchPlan, type PlanInput } from './launch-plan.js';
import type { ProxyLogger } from './log.js';
import type { ServerEndpoint, SwapPlan } from './server-swap.js';
import { EXIT_GRACE_MS, startServerProcess, type ServerProcess } from './server-process.js';
import { startStandIn, type StandIn } from './stand-in.js';

/** What runs now. */
type Running =
  | { kind: 'process'; key: string; process: ServerProcess }
  | { kind: 'stand-in'; key: string; standIn: StandIn };

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
}

/** The router's seam for a restart. */
export interface Swappable {
  swapServer(plan: SwapPlan): Promise<void>;
}

const keyOf = (plan: LaunchPlan): string =>
  plan.kind === 'start' ? plan.key : `${plan.kind}\0${plan.reason}`;

export class Supervisor {
  private running: Running | undefined;
  private router: Swappable | undefined;
  private pending: RootsChange[] = [];
  /** When the first of the pending changes came (for the restart's log). */
  private changedAt: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private again = false;
  private closed = false;

  constructor(private readonly o: SupervisorOptions) {}

  /** Start what the plan says now: the server, or a stand-in that says why not. */
  async start(): Promise<ServerEndpoint | { failed: number }> {
    const plan = await planLaunch(this.o.planInput());
    this.logPlan(plan);
    const started = await this.run(plan);
    if ('failed' in started && plan.kind === 'start') return started;
    return this.endpoint();
  }

  /** Restart on changes from now on, through `router`. */
  follow(router: Swappable): void {
    this.router = router;
    if (this.pending.length > 0) this.schedule();
  }

  /** The roots changed: restart if that changes what would run (after the burst settles). */
  onRoots(change: RootsChange): void {
    if (this.closed) return;
    if (this.pending.length === 0) this.changedAt = performance.now();
    this.pending.push(change);
    if (this.router !== undefined) this.schedule();
  }

  private schedule(): void {
    if (this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.replan();
    }, this.o.settleMs ?? 100);
  }

  /** The process that runs now, if it is one. */
  get process(): ServerProcess | undefined {
    return this.running?.kind === 'process' ? this.running.process : undefined;
  }

  /** Stop whatever runs and start nothing more. */
  stop(): void {
    this.closed = true;
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
    else log.info(`starting the server${plan.sandboxed ? ' in its sandbox' : ''}`);
  }

  /** Start `plan`'s server, or a stand-in; a command that cannot start gets a refusing stand-in. */
  private async run(plan: LaunchPlan): Promise<{ ok: true } | { failed: number }> {
    if (plan.kind === 'start') {
      const started = await startServerProcess(plan.spawn, this.o.log);
      if (!('failed' in started)) {
        this.running = { kind: 'process', key: plan.key, process: started };
        return { ok: true };
      }
      const reason = `${plan.spawn.command} could not be started (status ${started.failed}; see the proxy's log)`;
      this.running = {
        kind: 'stand-in',
        key: plan.key,
        standIn: startStandIn(this.o.server, this.o.version, { kind: 'refuse', reason }),
      };
      return started;
    }
    this.running = {
      kind: 'stand-in',
      key: keyOf(plan),
      standIn: startStandIn(this.o.server, this.o.version, plan),
    };
    return { ok: true };
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
    }
  }

  private async restartIfChanged(changes: RootsChange[], changedAt?: number): Promise<void> {
    const plan = await planLaunch(this.o.planInput());
    const old = this.running;
    if (this.closed || old === undefined || keyOf(plan) === old.key) return;
    const reason = describe(changes, old, plan);
    this.o.log.info(`restarting the server: ${reason}`);
    await this.router!.swapServer({
      reason,
      ...(changedAt === undefined ? {} : { changedAt }),
      drainMs: this.o.drainMs ?? 5000,
      log: this.o.log,
      stopOld: async () => {
        if (old.kind === 'stand-in') return old.standIn.close();
        old.process.serverIn.end();
        old.process.stop(EXIT_GRACE_MS, false);
        const status = await old.process.status;
        this.o.log.debug(`the old server exited with status ${status}`);
      },
      start: async () => {
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
        await this.run(plan);
        return this.endpoint();
      },
    });
  }
}

/** Why a restart happens, in words. */
function describe(changes: RootsChange[], old: Running, plan: LaunchPlan): string {
  const added = new Set(changes.flatMap((c) => c.added));
  const removed = new Set(changes.flatMap((c) => c.removed));
  for (const a of [...added]) if (removed.delete(a)) added.delete(a);
  const parts = [
    ...[...added].map((u) => `+${decodeURI(u.replace(/^file:\/\//, ''))}`),
    ...[...removed].map((u) => `-${decodeURI(u.replace(/^file:\/\//, ''))}`),
  ];
  const what =
    parts.length > 0
      ? `its roots changed (${parts.join(', ')})`
      : 'its roots or the policy changed what it is started with (a read-only flag, the launch or the sandbox)';
  if (old.kind === 'stand-in' && plan.kind === 'start') return `${what}; it can start now`;
  if (plan.kind !== 'start') return `${what}; it cannot run now: ${plan.reason}`;
  return what;
}
