/**
 * Replacing the server behind the host's back, the host's session going on: hold new calls, let
 * the calls in flight finish (for a while; then they fail with a clear error), stop the old
 * server, start the new one, replay the host's handshake to it (its answer stays with the proxy),
 * restore the host's resource subscriptions, tell the host which lists changed, release.
 */
import type { Readable, Writable } from 'node:stream';
import { notificationLine, type JsonObject } from '../protocol/messages.js';
import type { ProxyLogger } from './log.js';
import { isObject } from './mcp-line.js';

/** A server as the router talks to it: a child's pipes, or the stand-in's. */
export interface ServerEndpoint {
  serverIn: Writable;
  serverOut: Readable;
}

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
  /** Ask the current server (the proxy's own request; the host never sees the answer). */
  request(method: string, params: JsonObject): Promise<unknown>;
  /** The host's `initialize` params as sent to the server; undefined in a 2026-07-28 session. */
  initializeParams(): JsonObject | undefined;
  /** Learn the new server's `initialize` result (capabilities, version). */
  initialized(result: unknown): void;
  /** The current server's declared capabilities. */
  capabilities(): JsonObject;
  toServer(line: string): void;
  toHost(line: string): void;
  /** URIs the host subscribed to with `resources/subscribe`. */
  subscriptions(): string[];
  /** Learn the new server's tools for the call checks. */
  refreshTools(): void;
}

/** How one swap goes. */
export interface SwapPlan {
  /** Why, for the log and for the calls that fail. */
  reason: string;
  /** How long calls in flight may take to finish before they fail. */
  drainMs: number;
  /** Stop the old server; resolves once it has exited. */
  stopOld(): Promise<void>;
  /** Start the new one. */
  start(): Promise<ServerEndpoint>;
  log: ProxyLogger;
}

const LISTS = [
  ['tools', 'tools/list', 'tools'],
  ['prompts', 'prompts/list', 'prompts'],
  ['resources', 'resources/list', 'resources'],
] as const;

/** Pages read at most for one list. */
const MAX_PAGES = 100;

/** Each list the server declares, as JSON text ('' when it declares none, undefined if unknown). */
async function snapshot(r: SwapRouter): Promise<Record<string, string | undefined>> {
  const caps = r.capabilities();
  const out: Record<string, string | undefined> = {};
  for (const [cap, method, member] of LISTS) {
    if (caps[cap] === undefined) {
      out[cap] = '';
      continue;
    }
    try {
      const items: unknown[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const result = await r.request(method, cursor === undefined ? {} : { cursor });
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

/** Put a new server behind the host; resolves once the held messages are on their way. */
export async function swapServer(r: SwapRouter, plan: SwapPlan): Promise<void> {
  const { log } = plan;
  const release = r.holdHost();
  try {
    if (r.inFlight() > 0) {
      log.info(`waiting up to ${plan.drainMs} ms for ${r.inFlight()} call(s) in flight`);
      if (!(await settle(r.whenAnswered(), plan.drainMs))) {
        r.failInFlight(
          `mcp-roots-proxy restarted the server (${plan.reason}) before it answered; call again`,
        );
      }
    }
    const before = await snapshot(r);
    r.detach();
    await plan.stopOld();
    r.attach(await plan.start());

    const params = r.initializeParams();
    if (params !== undefined) {
      // 2025-era session: the new server must hear the host's handshake; the host has had its answer.
      r.initialized(await r.request('initialize', params));
      r.toServer(notificationLine('notifications/initialized'));
    }
    for (const uri of r.subscriptions()) {
      await r.request('resources/subscribe', { uri }).catch((err: unknown) => {
        log.warn(`could not subscribe the new server to ${uri}: ${(err as Error).message}`);
      });
    }
    const after = await snapshot(r);
    for (const [cap] of LISTS) {
      if (before[cap] === undefined || before[cap] !== after[cap]) {
        r.toHost(notificationLine(`notifications/${cap}/list_changed`));
      }
    }
    r.refreshTools();
  } catch (err) {
    log.error(`the restarted server did not take the host's session: ${(err as Error).message}`);
  } finally {
    release();
  }
}
