/** The socket side of the daemon: one JSON-RPC connection per client, subscriptions, pushes. */
import type { Server, Socket } from 'node:net';
import { rootCounts } from '../common/decision.js';
import type { CheckResult } from '../common/types.js';
import type { Logger } from './logger.js';
import { encodeNotification, JsonRpcConnection } from '../protocol/connection.js';
import { RootsError } from '../common/errors.js';
import {
  DAEMON_NAME,
  PROTOCOL_VERSION,
  type ConnectionStatus,
  type DaemonStatus,
  type ListRootsParams,
  type Methods,
} from '../protocol/methods.js';
import { rawJsonBytes } from '../protocol/raw-json.js';
import type { Change, PolicyState } from './state.js';
import type { DecisionSink } from './decision-log.js';
import { ListAnswers } from './list-answer.js';
import { RulesMemo } from './rules-push.js';
import { Throttle } from './throttle.js';

/** The most servers one connection may subscribe to (a proxy takes one, a host a few). */
export const MAX_SUBSCRIPTIONS = 1024;
/** How many connections `daemon/status` lists, and how many servers of each. */
const LISTED_CONNECTIONS = 200;
const LISTED_SUBSCRIPTIONS = 20;

/** One connected client. */
interface Client {
  connection: JsonRpcConnection;
  name: string;
  subscriptions: Set<string>;
}

/** Everything the request handlers need besides the policy state. */
export interface ServerDeps {
  state: PolicyState;
  log: Logger;
  version: string;
  /** Builds `daemon/status` (the daemon owns what the server does not know). */
  status: () => Promise<DaemonStatus>;
  /** The grants family and lockdown, from the grants store. */
  extra?: Partial<{
    [M in keyof Methods]: (params: Methods[M]['params']) => Promise<Methods[M]['result']>;
  }>;
  /** Settle window for pushes to one server (ms). */
  settleMs: number;
  /** Where every check's answer is recorded. */
  decisions: DecisionSink;
  /** The expired grant a path refused as outside every root lay in, in words (grants.ts). */
  endedGrant?: (server: string, canonical: string) => string | undefined;
}

/** Serves every connection of a listening socket. */
export class RootsServer {
  private readonly clients = new Set<Client>();
  private readonly subscribers = new Map<string, Set<Client>>();
  private readonly throttle: Throttle<Change>;
  private readonly rules = new RulesMemo();
  private readonly answers = new ListAnswers();
  private closing: Promise<void> | undefined;

  constructor(
    private readonly server: Server,
    private readonly deps: ServerDeps,
  ) {
    server.on('connection', (socket) => this.accept(socket));
    this.throttle = new Throttle<Change>(deps.settleMs, (server, change) =>
      this.push(server, change),
    );
    deps.state.on('changed', (_revision, changes) => {
      for (const change of changes) {
        const { server, added, removed, changed } = change;
        deps.log.info(`roots changed for ${server}: ${rootCounts(added, removed, changed)}`, {
          server,
          added,
          removed,
          ...(changed.length > 0 ? { changed } : {}),
        });
        if (this.subscribers.has(change.server)) this.throttle.offer(change.server, change);
      }
    });
    // Lockdown takes every server's sandbox paths away too (PolicyState.explain), and a list
    // that was empty stays empty and pushes nothing: tell every subscriber to look again.
    deps.state.on('lockdown', () => {
      for (const [server, clients] of this.subscribers)
        for (const client of clients)
          client.connection.notify('notifications/policy/rules_changed', { server });
    });
    // An edit of a server's launch, sandbox, tools or ask alone changes no list: say so apart.
    deps.state.on('resolved', (resolved) => {
      for (const server of this.rules.changed(resolved)) {
        deps.log.info(
          `rules changed for ${server} (launch, sandbox, tools, ask or what others may write)`,
          { server },
        );
        for (const client of this.subscribers.get(server) ?? []) {
          client.connection.notify('notifications/policy/rules_changed', { server });
        }
      }
    });
  }

  /**
   * Connected clients, for `daemon/status`: the first `LISTED_CONNECTIONS`, each with its first
   * `LISTED_SUBSCRIPTIONS` servers and how many more it has, and how many connections are not
   * listed. Listed whole, the answer grew past what any client reads (an attacker pass: one
   * connection's 280,000 subscriptions made it 160 MB, and `rootsctl status` failed for all).
   */
  get connections(): { listed: ConnectionStatus[]; notListed: number } {
    const listed: ConnectionStatus[] = [];
    for (const c of this.clients) {
      if (listed.length === LISTED_CONNECTIONS) break;
      const names = [...c.subscriptions].sort();
      const more = names.length - LISTED_SUBSCRIPTIONS;
      listed.push({
        client: c.name,
        subscriptions: names.slice(0, LISTED_SUBSCRIPTIONS),
        ...(more > 0 ? { more } : {}),
      });
    }
    return { listed, notListed: this.clients.size - listed.length };
  }

  /** Number of connected clients. */
  get clientCount(): number {
    return this.clients.size;
  }

  /** Number of (connection, server) subscriptions. */
  get subscriptionCount(): number {
    let n = 0;
    for (const c of this.clients) n += c.subscriptions.size;
    return n;
  }

  /** Servers with at least one subscriber. */
  get subscribedServers(): string[] {
    return [...this.subscribers.keys()];
  }

  /** Stop accepting, close every connection; the same promise each time. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.throttle.clear();
      await Promise.all([...this.clients].map((c) => c.connection.close()));
    })();
    return this.closing;
  }

  private accept(socket: Socket): void {
    if (this.closing) {
      socket.destroy();
      return;
    }
    const connection = new JsonRpcConnection(socket, socket, {
      onError: (err, context) => this.deps.log.warn(`client error (${context}): ${String(err)}`),
    });
    const client: Client = { connection, name: 'unknown', subscriptions: new Set() };
    this.clients.add(client);
    connection.once('close', (reason) => {
      this.clients.delete(client);
      for (const server of client.subscriptions) this.removeSubscriber(server, client);
      this.deps.log.debug(`client ${client.name} disconnected: ${reason}`);
    });
    this.register(client);
  }

  private register(client: Client): void {
    const { state } = this.deps;
    const c = client.connection;
    c.onRequest('initialize', (params) => {
      if (params.clientInfo)
        client.name = `${params.clientInfo.name} ${params.clientInfo.version}`.trim();
      return {
        protocolVersion: PROTOCOL_VERSION,
        serverInfo: { name: DAEMON_NAME, version: this.deps.version },
        capabilities: { subscriptions: true, grants: true, lockdown: true, explain: true },
      };
    });
    // Answered in the request's own turn unless a change someone asked for is still on its way.
    c.onRequest('roots/list', (params) =>
      state.isFresh()
        ? this.list(params, client)
        : state.fresh().then(() => this.list(params, client)),
    );
    c.onRequest('roots/subscribe', async (params) => {
      await state.fresh();
      this.addSubscriber(params.server, client);
      return { revision: state.revision };
    });
    c.onRequest('roots/unsubscribe', (params) => {
      if (client.subscriptions.has(params.server)) this.removeSubscriber(params.server, client);
      return {};
    });
    c.onRequest('roots/check', async (params) => {
      const access = params.access ?? 'read';
      const result = withEndedGrant(
        await state.check(params.server, params.path, access),
        params.server,
        this.deps.endedGrant,
      );
      if (!result.allowed)
        this.deps.log.info(`denied ${access} for ${params.server}: ${result.reason}`);
      if (params.record === false) return result;
      this.deps.decisions.record({
        kind: 'check',
        server: params.server,
        path: params.path,
        access,
        allowed: result.allowed,
        reason: result.reason,
        ...(params.tool !== undefined ? { tool: params.tool } : {}),
        ...asker(params, client.name),
      });
      return result;
    });
    c.onRequest('log/refused', (params) => {
      // The proxy refused a call's path by itself (its form alone), before any check here: the
      // log says so, so that what an agent tried shows beside what the daemon refused.
      this.deps.decisions.record({
        kind: 'check',
        server: params.server,
        path: params.path,
        access: params.access,
        allowed: false,
        reason: `refused by mcp-roots-proxy: ${params.reason}`,
        ...(params.tool !== undefined ? { tool: params.tool } : {}),
        ...asker(params, client.name),
      });
      return {};
    });
    c.onRequest('log/ask', (params) => {
      // The proxy reports an ask it put to the person through the host, and the answer.
      this.deps.decisions.record({ kind: 'ask', ...params });
      return {};
    });
    c.onRequest('policy/explain', async (params) => {
      await state.fresh();
      if (params.writers === true) this.rules.askedWriters(state.resolved, params.server);
      return state.explain(params.server, params.writers ?? false);
    });
    c.onRequest('policy/reload', async () => {
      const { ok } = await state.reload(
        { policy: true, grants: true, repin: true },
        'reload request',
      );
      return { ok, revision: state.revision, errors: state.errors, warnings: state.warnings };
    });
    c.onRequest('daemon/status', () => this.deps.status());
    for (const [method, handler] of Object.entries(this.deps.extra ?? {})) {
      c.onRequest(method as keyof Methods, handler as never);
    }
  }

  /** `roots/list` once the state is fresh: ready-made JSON from the snapshot, no filesystem access. */
  private list(params: ListRootsParams, client: Client) {
    const { state } = this.deps;
    if (params.subscribe) this.addSubscriber(params.server, client);
    else state.noteAsked(params.server);
    return this.answers.of(state.rootsJson(params.server), state.revision, state.instance);
  }

  private addSubscriber(server: string, client: Client): void {
    if (client.subscriptions.has(server)) return;
    if (client.subscriptions.size >= MAX_SUBSCRIPTIONS) {
      throw new RootsError(
        'USAGE',
        `this connection is subscribed to ${MAX_SUBSCRIPTIONS} servers already, the most one may be: unsubscribe from one first, or open another connection`,
      );
    }
    client.subscriptions.add(server);
    let set = this.subscribers.get(server);
    if (!set) {
      set = new Set();
      this.subscribers.set(server, set);
      this.rules.subscribed(this.deps.state.resolved, server);
    }
    set.add(client);
    this.deps.state.subscribe(server);
  }

  private removeSubscriber(server: string, client: Client): void {
    client.subscriptions.delete(server);
    const set = this.subscribers.get(server);
    if (!set) return;
    set.delete(client);
    if (set.size === 0) {
      this.subscribers.delete(server);
      this.rules.unsubscribed(server);
    }
    this.deps.state.unsubscribe(server);
  }

  private push(server: string, change: Change): void {
    const set = this.subscribers.get(server);
    if (!set) return;
    const { state } = this.deps;
    const params = rawJsonBytes<never>([
      `{"server":${JSON.stringify(server)},"revision":${state.revision},"instance":${JSON.stringify(state.instance)},"roots":`,
      ...change.parts,
      '}',
    ]);
    // One buffer for every subscriber, copied from the list's kept runs: the list may be tens
    // of thousands of roots, and encoding it as one string held the event loop for tens of ms.
    const line = encodeNotification('notifications/roots/list_changed', params);
    const started = performance.now();
    const cpu = process.cpuUsage();
    // Each push holds the whole list: a subscriber still reading the last gets only the newest.
    for (const client of set) client.connection.notifyLatest(server, line);
    // CPU time beside the wall time: on a busy machine the loop's wall time is mostly waiting.
    const { user, system } = process.cpuUsage(cpu);
    this.deps.log.debug(
      `pushed ${server}'s list (${line.length} bytes) to ${set.size} subscriber${set.size === 1 ? '' : 's'} in ${(performance.now() - started).toFixed(1)} ms (CPU ${((user + system) / 1000).toFixed(1)} ms)`,
    );
  }
}

/**
 * Who a check is for, in the decision log: the host the caller named, or, for a question asked
 * for no tool call and no host (`rootsctl check`, a script), the client that asked, so that a
 * person's own questions are not read afterwards as a server's refusals.
 */
function asker(
  params: { tool?: string; client?: string },
  connection: string,
): { client?: string } {
  if (params.client !== undefined) return { client: params.client };
  return params.tool === undefined && connection !== 'unknown' ? { client: connection } : {};
}

/**
 * `result` with the grant that ended named, when it refuses a path outside every root that an
 * expired grant held: "outside every root" alone left the person looking for the grant they
 * remembered. An expired policy entry is named by the check itself (policies/check-access.ts).
 */
function withEndedGrant(
  result: CheckResult,
  server: string,
  endedGrant: ServerDeps['endedGrant'],
): CheckResult {
  if (result.refusal !== 'outside' || result.canonical === undefined) return result;
  if (/ expired at /.test(result.reason)) return result;
  const ended = endedGrant?.(server, result.canonical);
  return ended === undefined ? result : { ...result, reason: `${result.reason}: ${ended}` };
}
