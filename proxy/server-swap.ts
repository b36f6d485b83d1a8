/**
 * Replacing the server behind the host's back, the host's session going on: hold new calls, let
 * the calls in flight finish (for a while; then they fail with a clear error), stop the old
 * server, start the new one, open the host's session on it (its answers stay with the proxy),
 * restore the host's subscriptions, tell the host which lists changed, release.
 *
 * The session is opened as the host opened it. A 2025-era host sent `initialize`: the new server
 * gets the same `initialize` and `notifications/initialized`. A 2026-07-28 host sent no handshake
 * (each request carries its own envelope): the new server gets the `server/discover` probe, whose
 * answer tells the proxy what the new server declares and that it is ready.
 *
 * The new server's own start is most of a restart (bench/restart-latency.ts), so it is started
 * and opened while the old one finishes its calls and stops; the host's calls are held from the
 * start, so none reaches the old server once the policy has changed.
 */
import { notificationLine, type JsonObject } from '../protocol/messages.js';
import {
  SUBSCRIPTION_ID_KEY,
  type HostSubscriptions,
  type ListenStream,
} from './host-subscriptions.js';
import type { ProxyLogger } from './log.js';
import { isObject } from './mcp-line.js';
import { openServer, type Opening, type ServerEndpoint } from './server-opening.js';

export type { ServerEndpoint };

/** What the swap needs from the router (proxy.ts implements it). */
export interface SwapRouter {
  /** Hold the host's messages from now; the function releases them. */
  holdHost(): () => void;
  /** How many host requests the server has not answered. */
  inFlight(): number;
  /** Resolves once the server has answered every host request. */
  whenAnswered(): Promise<void>;
  /** Answer every host request still in flight with an error saying `why`. */
  failInFlight(why: string): void;
  /** Stop listening to the current server (its exit is then no longer the session's end). */
  detach(): void;
  attach(server: ServerEndpoint): void;
  /**
   * Ask the current server (the proxy's own request; the host never sees the answer), with the
   * host's per-request envelope in a 2026-07-28 session.
   */
  request(method: string, params: JsonObject): Promise<unknown>;
  /** The host's `initialize` params as sent to the server; undefined in a 2026-07-28 session. */
  initializeParams(): JsonObject | undefined;
  /** Whether the host has opened its session (`initialize`, or a 2026-07-28 request). */
  opened(): boolean;
  /** `params` with the host's per-request envelope in a 2026-07-28 session. */
  withEnvelope(params: JsonObject): JsonObject;
  /** Learn the new server's `initialize` or `server/discover` result (its capabilities). */
  initialized(result: unknown): void;
  /** The current server's declared capabilities. */
  capabilities(): JsonObject;
  toServer(line: string): void;
  toHost(line: string): void;
  /** What the host subscribed to. */
  subscriptions: HostSubscriptions;
  /**
   * Why one of these `file:` URIs may not be read under the policy now, or undefined: a
   * subscription is restored only if it would be relayed today.
   */
  uriRefusal(uris: readonly string[]): Promise<string | undefined>;
  /** End a host's `subscriptions/listen` stream with an error saying `message`. */
  endStream(stream: ListenStream, message: string): void;
  /** Learn the new server's tools for the call checks. */
  refreshTools(): void;
}

/** How one swap goes. */
export interface SwapPlan {
  /** Why, for the log and for the calls that fail. */
  reason: string;
  /** How long calls in flight may take to finish before they fail. */
  drainMs: number;
  /**
   * Once aborted (from the start, or during the drain), the old server is stopped at once: its
   * calls in flight fail, its lists are not read. For a denied path it must not read any longer.
   */
  stopNow?: AbortSignal;
  /**
   * Once aborted, the new server's opening (its answer to `initialize` or `server/discover`) and
   * settling (its subscriptions restored, its lists read) end where they are: a change came that
   * must be planned now, and a server answering slowly, or never, must not hold it up while it
   * keeps what the change takes away.
   */
  settleNow?: AbortSignal;
  /**
   * Start the new server only once the old one has exited (a sandboxed server: the two must
   * never run at once, or the old could hand the new what its mounts no longer give). Otherwise
   * the new one starts while the old finishes, which is most of a restart's time saved.
   */
  sequential?: boolean;
  /** Stop the old server; resolves once it has exited. */
  stopOld(): Promise<void>;
  /** Start the new one. */
  start(): Promise<ServerEndpoint>;
  log: ProxyLogger;
  /** When (performance.now()) the first change behind this restart reached the proxy. */
  changedAt?: number;
}

const LISTS = [
  ['tools', 'tools/list', 'tools'],
  ['prompts', 'prompts/list', 'prompts'],
  ['resources', 'resources/list', 'resources'],
] as const;

/** Pages read at most for one list. */
const MAX_PAGES = 100;

/** A request's answer, or `STOPPED` once `stop` aborts (a server must not hold a swap up). */
const STOPPED = Symbol('stopped');

/**
 * Each list the server declares, as JSON text ('' when it declares none, undefined if unknown).
 * Once `stop` aborts, the lists not yet read are left unknown (undefined): the old server is
 * stopped at once, however slowly it gives them.
 */
async function snapshot(
  r: SwapRouter,
  caps: JsonObject,
  stop?: AbortSignal,
): Promise<Record<string, string | undefined>> {
  const out: Record<string, string | undefined> = {};
  const stopped = aborted(stop).then(() => STOPPED);
  for (const [cap, method, member] of LISTS) {
    if (caps[cap] === undefined) {
      out[cap] = '';
      continue;
    }
    if (stop?.aborted === true) {
      out[cap] = undefined;
      continue;
    }
    try {
      const items: unknown[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const request = r.request(method, cursor === undefined ? {} : { cursor });
        request.catch(() => undefined); // answered after a stop: nobody waits for it
        const result = await Promise.race([request, stopped]);
        if (result === STOPPED) throw new Error('stopped');
        if (!isObject(result)) break;
        const list = result[member];
        if (Array.isArray(list)) items.push(...(list as unknown[]));
        cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
        if (cursor === undefined) break;
      }
      out[cap] = JSON.stringify(items);
    } catch {
      out[cap] = undefined;
    }
  }
  return out;
}

const settle = (p: Promise<void>, ms: number): Promise<boolean> => {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]).finally(() => clearTimeout(timer));
};

/** The server's capabilities from `server/discover` (2026-07-28), or undefined if it would not say. */
async function discover(r: SwapRouter, log: ProxyLogger): Promise<JsonObject | undefined> {
  try {
    const result = await r.request('server/discover', {});
    r.initialized(result);
    return isObject(result) && isObject(result.capabilities) ? result.capabilities : undefined;
  } catch (err) {
    log.warn(`the server did not answer server/discover: ${(err as Error).message}`);
    return undefined;
  }
}

/**
 * Give the new server the host's subscriptions: 2025-era URIs, 2026-07-28 streams. Each is checked
 * again first, as when the host asked (a policy edit may deny the file since): a refused URI is
 * dropped (the host learns of no more changes to it), a refused stream is ended with the error
 * the host would get for it now.
 */
async function restoreSubscriptions(
  r: SwapRouter,
  log: ProxyLogger,
  stop?: AbortSignal,
): Promise<void> {
  const stopped = aborted(stop).then(() => STOPPED);
  for (const uri of r.subscriptions.resourceUris()) {
    if (stop?.aborted === true) return;
    const refused = await r.uriRefusal([uri]);
    if (refused !== undefined) {
      log.warn(`the host's subscription to ${uri} is not restored: ${refused}`);
      r.subscriptions.forget(uri);
      continue;
    }
    const subscribed = r.request('resources/subscribe', { uri }).catch((err: unknown) => {
      log.warn(`could not subscribe the new server to ${uri}: ${(err as Error).message}`);
    });
    await Promise.race([subscribed, stopped]);
  }
  for (const stream of r.subscriptions.listenStreams()) {
    const uris = stream.filter.resourceSubscriptions;
    const list = Array.isArray(uris) ? uris.filter((u): u is string => typeof u === 'string') : [];
    const refused = await r.uriRefusal(list);
    if (refused !== undefined) {
      log.warn(`the host's subscriptions/listen ${stream.idText} is not restored: ${refused}`);
      r.endStream(stream, `mcp-roots-proxy refused ${refused}; the stream ends`);
      continue;
    }
    r.subscriptions.replaying(stream);
    r.toServer(stream.text);
  }
}

/** Tell the host a list changed: unasked in a 2025-era session, on its streams in a 2026 one. */
function listChanged(r: SwapRouter, list: string, modern: boolean): void {
  const method = `notifications/${list}/list_changed`;
  if (!modern) return r.toHost(notificationLine(method));
  for (const s of r.subscriptions.streamsFor(list)) {
    r.toHost(notificationLine(method, JSON.stringify({ _meta: { [SUBSCRIPTION_ID_KEY]: s.id } })));
  }
}

/** The step of a sequential restart that starts the new server (bench/restart-latency.ts reads it). */
export const SEQUENTIAL_START = 'the new server started once the old one exited';

/** How long the new server may take to answer its opening request. */
const OPENING_TIMEOUT_MS = 60_000;

/** How long each step of a restart took, for the log (and bench/restart-latency.ts). */
class Phases {
  private readonly parts: string[] = [];
  constructor(private last = performance.now()) {}
  /** The step `name` ended now. */
  mark(name: string): void {
    const now = performance.now();
    this.add(name, now - this.last);
    this.last = now;
  }
  /** A step that ran beside the others. */
  add(name: string, ms: number): void {
    this.parts.push(`${name} ${Math.round(ms)}`);
  }
  toString(): string {
    return this.parts.join(', ');
  }
}

/** Start the new server and open the host's session on it, as the host opened it on the old one. */
async function startNext(r: SwapRouter, plan: SwapPlan): Promise<Opening & { ms: number }> {
  const t0 = performance.now();
  const server = await plan.start();
  const params = r.initializeParams();
  const limits = { timeoutMs: OPENING_TIMEOUT_MS, stop: plan.settleNow };
  // 2025 era: the host's own handshake (the host has had its answer); 2026-07-28: the probe.
  const opening =
    params === undefined
      ? await openServer(server, 'server/discover', r.withEnvelope({}), limits)
      : await openServer(server, 'initialize', params, limits);
  return { ...opening, ms: Math.round(performance.now() - t0) };
}

/** Resolves when `signal` aborts (never without one). */
const aborted = (signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve) => {
    if (signal?.aborted) resolve();
    else signal?.addEventListener('abort', () => resolve(), { once: true });
  });

/** Let the old server finish its calls, read its lists, stop it; resolves with the lists. */
async function retireOld(
  r: SwapRouter,
  plan: SwapPlan,
  modern: boolean,
  phases: Phases,
): Promise<Record<string, string | undefined>> {
  const now = plan.stopNow;
  if (!now?.aborted && r.inFlight() > 0) {
    plan.log.info(`waiting up to ${plan.drainMs} ms for ${r.inFlight()} call(s) in flight`);
    const drained = settle(Promise.race([r.whenAnswered(), aborted(now)]), plan.drainMs);
    if (!(await drained) || now?.aborted) {
      r.failInFlight(
        `mcp-roots-proxy restarted the server (${plan.reason}) before it answered; call again`,
      );
    }
  }
  if (now?.aborted) {
    // Synchronous up to the signal when aborted from the start: nothing runs in between.
    r.failInFlight(
      `mcp-roots-proxy stopped the server (${plan.reason}) before it answered; call again`,
    );
    r.detach();
    const stopped = plan.stopOld();
    phases.mark('drain');
    await stopped;
    phases.mark('stop at once');
    return {};
  }
  phases.mark('drain');
  // A 2026-07-28 session has no initialize result to read the old server's lists from.
  const asked = modern
    ? await Promise.race([discover(r, plan.log), aborted(now).then(() => undefined)])
    : undefined;
  const oldCaps = asked ?? r.capabilities();
  const before = await snapshot(r, oldCaps, now);
  phases.mark('old lists');
  if (now?.aborted) {
    r.failInFlight(
      `mcp-roots-proxy stopped the server (${plan.reason}) before it answered; call again`,
    );
  }
  r.detach();
  await plan.stopOld();
  phases.mark('stop');
  return before;
}

/**
 * A swap before the host opened its session: the old server is stopped and the new one started,
 * and nothing more, since the host's own first message opens the new one as it would have the
 * old. An opening made up by the proxy (a `server/discover` without the host's envelope, in no
 * era) fixed the wrong era on a server that serves both: every later answer lacked 2026-07-28's
 * `resultType`, and the host's SDK refused each.
 */
async function swapUnopened(r: SwapRouter, plan: SwapPlan, phases: Phases): Promise<void> {
  r.detach();
  await plan.stopOld();
  phases.mark('stop');
  const server = await plan.start();
  phases.mark('start');
  r.attach(server);
  server.serverOut.resume();
  plan.log.info(
    `restarted the server before the host opened its session (ms: ${phases.toString()})`,
  );
}

/** Put a new server behind the host; resolves once the held messages are on their way. */
export async function swapServer(r: SwapRouter, plan: SwapPlan): Promise<void> {
  const { log } = plan;
  const release = r.holdHost();
  if (!r.opened()) {
    const phases = new Phases(plan.changedAt);
    try {
      await swapUnopened(r, plan, phases);
    } catch (err) {
      log.error(`the restarted server did not start: ${(err as Error).message}`);
    } finally {
      release();
    }
    return;
  }
  const modern = r.initializeParams() === undefined;
  const phases = new Phases(plan.changedAt);
  if (plan.changedAt !== undefined) phases.mark('settle and plan');
  try {
    let old: PromiseSettledResult<Record<string, string | undefined>>;
    let opened: PromiseSettledResult<Opening & { ms: number }>;
    if (plan.sequential === true) {
      [old] = await Promise.allSettled([retireOld(r, plan, modern, phases)]);
      [opened] = await Promise.allSettled([startNext(r, plan)]);
      if (opened.status === 'rejected') throw opened.reason;
      phases.mark(SEQUENTIAL_START);
    } else {
      [old, opened] = await Promise.allSettled([
        retireOld(r, plan, modern, phases),
        startNext(r, plan),
      ]);
      if (opened.status === 'rejected') throw opened.reason;
      phases.mark('wait for the new server');
      phases.add('new server start alongside', opened.value.ms);
    }
    r.attach(opened.value.server);
    opened.value.server.serverOut.resume();
    const { answer } = opened.value;
    if ('error' in answer && !modern) throw answer.error;
    if ('error' in answer)
      log.warn(`the server did not answer server/discover: ${answer.error.message}`);
    else r.initialized(answer.result);
    if (!modern) r.toServer(notificationLine('notifications/initialized'));
    if (old.status === 'rejected') throw old.reason;
    const before = old.value;
    await restoreSubscriptions(r, log, plan.settleNow);
    const after = await snapshot(r, r.capabilities(), plan.settleNow);
    phases.mark('subscriptions and new lists');
    // An old server stopped at once had its lists unread: each list the new one declares may differ.
    const unread = Object.keys(before).length === 0;
    for (const [list] of LISTS) {
      const differs = unread
        ? after[list] !== ''
        : before[list] === undefined || before[list] !== after[list];
      if (differs) listChanged(r, list, modern);
    }
    r.refreshTools();
    log.info(`restarted the server (ms: ${phases.toString()})`);
  } catch (err) {
    log.error(`the restarted server did not take the host's session: ${(err as Error).message}`);
  } finally {
    release();
  }
}
