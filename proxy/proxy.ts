/**
 * The relay between an MCP host and one stdio MCP server. This router only routes: it reads lines
 * from both sides and hands each to the part that handles it (docs/architecture.md, "proxy").
 */
import { EventEmitter } from 'node:events';
import { errnoCode } from '../common/errors.js';
import { memberText } from '../protocol/json-text.js';
import { errorLine, type JsonObject } from '../protocol/messages.js';
import { RpcCode } from '../protocol/rpc-errors.js';
import { batchElements, looksLikeBatch, splitHostBatch } from './batch.js';
import { AskByInput } from './ask-by-input.js';
import { AskPerson, formElicitation } from './ask-person.js';
import { CallGate } from './call-gate.js';
import { SessionEra } from './era.js';
import { HostRequests } from './host-requests.js';
import { HostSubscriptions } from './host-subscriptions.js';
import { InOrder } from './in-order.js';
import { INPUT_REQUIRED_METHODS, InputRequired } from './input-required.js';
import { LineSplitter } from './line-splitter.js';
import { writeLine } from './line-writer.js';
import { isObject, McpLine } from './mcp-line.js';
import { OpenIds } from './open-ids.js';
import { isOwnKey, OWN_ID_PREFIX, OwnRequests } from './own-requests.js';
import { RelayedRequests } from './relayed.js';
import { RootsHold } from './roots-hold.js';
import { ServerRoots, withRootsCapability } from './server-roots.js';
import { SessionHealth } from './session-health.js';
import { swapServer, type ServerEndpoint, type SwapPlan, type SwapRouter } from './server-swap.js';
import { ToolCatalog } from './tool-catalog.js';
import { unreadableHostLine, unreadableServerLine } from './unreadable-line.js';
import { PROXY_DEFAULTS, type RootsProxyEvents, type RootsProxyOptions } from './proxy-options.js';

export { OWN_ID_PREFIX } from './own-requests.js';
export type { RootsProxyEvents, RootsProxyOptions } from './proxy-options.js';

/** Relays MCP lines between a host and a server, and answers for roots and enforcement. */
export class RootsProxy extends EventEmitter<RootsProxyEvents> {
  /** The options with every default filled in. */
  private readonly settings: Required<RootsProxyOptions>;
  private readonly hostSplitter = new LineSplitter();
  private serverSplitter = new LineSplitter();
  /** The server the host talks to now; a restart puts another one here (server-swap.ts). */
  private server: ServerEndpoint;
  private readonly onOut: {
    data: (chunk: Buffer) => void;
    end: () => void;
    error: (err: Error) => void;
  };
  /** While a restart runs, host messages wait on this. */
  private held: Promise<void> | undefined;
  /** The host's `initialize` params as sent to the server, for a restarted server's handshake. */
  private initializeParamsText: string | undefined;
  private serverCaps: JsonObject = {};
  /** Requests the server sent the host, by id: the only ones a host answer may go back to. */
  private readonly serverAsked = new OpenIds();
  /** What the host subscribed to, restored on a restarted server. */
  private readonly subscriptions = new HostSubscriptions();
  /** Host lines are admitted here in arrival order; checks run beside it (in-order.ts). */
  private readonly hostLines: InOrder<McpLine>;
  /** The host's requests: pending while checked, relayed, or answered by the proxy. */
  private readonly requests: HostRequests;
  /** An unknown `--server` name and an unreachable daemon, as the host sees them. */
  private readonly session: SessionHealth;

  private initialized = false;
  /** The id key of the host's `initialize`; undefined in a 2026-07-28 session, which has none. */
  private initializeKey: string | undefined;
  /** The era of each host request, and the envelope the proxy's own requests copy. */
  private readonly era = new SessionEra();
  private serverHasTools = true;
  /** Set once the server has closed its output: nothing it was asked will be answered. */
  private serverGone = false;

  /** Write one line to the server (back-pressure on the host's input). */
  private readonly toServer: (data: Buffer | string) => void;
  /** Write one line to the host (back-pressure on the server's output). */
  private readonly toHost: (data: Buffer | string) => void;

  private readonly own: OwnRequests;
  /** The proxy's own requests to the host: the asks. */
  private readonly hostOwn: OwnRequests;
  private readonly asker: AskPerson;
  /** The asks of a 2026-07-28 session, as input requests. */
  private readonly askByInput: AskByInput;
  private readonly relayed = new RelayedRequests();
  private readonly roots: ServerRoots;
  private readonly catalog: ToolCatalog;
  private readonly gate: CallGate;
  private readonly inputs: InputRequired;

  constructor(options: RootsProxyOptions) {
    super();
    this.settings = { ...PROXY_DEFAULTS, ...options };
    const { hostIn, hostOut, serverIn, serverOut, link, log } = this.settings;
    this.server = { serverIn, serverOut };
    const toServer = (data: Buffer | string): void => writeLine(this.server.serverIn, data, hostIn);
    const toHost = (data: Buffer | string): void => writeLine(hostOut, data, this.server.serverOut);
    const hold = new RootsHold(this.settings.holdMs, log);
    this.own = new OwnRequests(toServer, this.settings.requestTimeoutMs);
    this.hostOwn = new OwnRequests(toHost, this.settings.askWaitMs, `${OWN_ID_PREFIX}ask:`);
    this.asker = new AskPerson({
      server: this.settings.server,
      link,
      hold,
      log,
      requestHost: (method, params) => this.hostOwn.request(method, params),
      rememberMs: this.settings.askRememberMs,
      rootsServed: (uri) => this.roots.whenServed(uri, this.settings.requestTimeoutMs),
    });
    this.askByInput = new AskByInput({
      server: this.settings.server,
      asker: this.asker,
      log,
      limitMs: this.settings.askWaitMs,
      answerError: (line, error) => this.requests.answer(line, { error }),
    });
    this.roots = new ServerRoots({
      link,
      hold,
      log,
      rootsWaitMs: this.settings.rootsWaitMs,
      toServer,
      ping: () => this.own.request('ping', {}),
    });
    this.catalog = new ToolCatalog({
      request: (method, params) => this.own.request(method, this.withOwnMeta(params)),
      // Own properties only: a tool named `constructor` has no rule.
      ruleFor: (name) => (Object.hasOwn(link.tools, name) ? link.tools[name] : undefined),
      waitMs: this.settings.toolsWaitMs,
      log,
    });
    this.gate = new CallGate({
      server: this.settings.server,
      asker: this.asker,
      askByInput: this.askByInput,
      link,
      catalog: this.catalog,
      hold,
      log,
      answerHost: (line, answer) => this.requests.answer(line, answer),
    });
    this.inputs = new InputRequired({
      log,
      rootsAnswer: () => this.roots.answerTextWhenKnown(),
      toServer,
      toHost,
      settled: (hostKey) => this.relayed.settled(hostKey),
      idPrefix: OWN_ID_PREFIX,
    });
    this.toServer = toServer;
    this.toHost = toHost;
    this.requests = new HostRequests({
      log,
      toServer,
      toHost,
      inputs: this.inputs,
      relayed: this.relayed,
      hasRoots: () => this.roots.hasRoots,
      whileHeld: () => this.whileHeld(),
      serverGone: () => this.serverGone,
      beside: (task) => this.hostLines.besideQueue(task),
    });
    this.session = new SessionHealth({
      server: this.settings.server,
      link,
      allowUnknownServer: this.settings.allowUnknownServer,
      log,
      toHost,
    });
    this.hostLines = new InOrder(
      (line) => this.onHostLine(line),
      (err) => log.error(`handling a host message: ${(err as Error).stack ?? String(err)}`),
      () => {
        this.server.serverIn.end();
        this.emit('hostClosed');
      },
    );
    this.onOut = {
      data: (chunk) => this.onServerData(chunk),
      end: () => this.onServerEnd(),
      error: (err) => log.debug(`server output: ${err.message}`),
    };

    hostIn.on('data', (chunk: Buffer) => this.onHostData(chunk));
    hostIn.on('end', () => this.onHostEnd());
    hostIn.on('error', (err) => log.debug(`host input: ${err.message}`));
    this.attach(this.server);
    hostOut.on('error', (err: Error) => {
      // The host went away: there is nobody left to serve.
      if (errnoCode(err) === 'EPIPE' || errnoCode(err) === 'ERR_STREAM_DESTROYED')
        this.emit('hostClosed');
      else log.error(`writing to the host: ${err.message}`);
    });
  }

  // ---- host to server ----

  private onHostData(chunk: Buffer): void {
    for (const bytes of this.hostSplitter.push(chunk)) this.acceptHostLine(bytes);
  }

  private onHostEnd(): void {
    const rest = this.hostSplitter.end();
    if (rest !== undefined) this.acceptHostLine(rest);
    this.hostOwn.failAll('the host closed its output');
    this.hostLines.end();
  }

  private acceptHostLine(bytes: Buffer): void {
    if (looksLikeBatch(bytes)) return this.acceptHostBatch(bytes);
    this.acceptHostMessage(new McpLine(bytes));
  }

  /** A batch never reaches the server as one line: its requests are refused, the rest go alone. */
  private acceptHostBatch(bytes: Buffer): void {
    const elements = batchElements(bytes.toString('utf8'));
    if (elements === undefined) {
      // Not JSON: a server's lenient parser must not get to read it either.
      const message = 'mcp-roots-proxy: a line that starts like a JSON-RPC batch is not valid JSON';
      this.toHost(errorLine('null', { code: RpcCode.PARSE_ERROR, message }));
      return;
    }
    const { alone, refusal, refusedKeys } = splitHostBatch(elements);
    // Only request ids: a response's id is the server's, a different namespace.
    for (const key of refusedKeys) this.requests.answeredInBatch(key);
    if (refusal !== undefined) this.toHost(refusal);
    for (const line of alone) this.acceptHostMessage(line);
  }

  private acceptHostMessage(line: McpLine): void {
    const unreadable = unreadableHostLine(line);
    if (unreadable !== undefined) {
      this.settings.log.warn(unreadable.message);
      this.toHost(errorLine(line.idText ?? 'null', unreadable));
      return;
    }
    // Answers to the server's requests never wait behind a held call.
    if (line.isResponse) {
      // The host's answer to an ask of the proxy's own is the proxy's, never the server's.
      if (line.msg !== undefined && this.hostOwn.isOwn(line.msg)) this.hostOwn.settle(line.msg);
      // Only an answer to a request the server sent the host reaches the server: anything else
      // (a `roots/list` answer of the host's own making, say) would stand in for the proxy's.
      else if (this.serverAsked.take(line.idKey)) this.toServer(line.bytes);
      else
        this.settings.log.warn(
          `dropped the host's answer to id ${line.idText ?? 'null'}: the server has no request open under it`,
        );
      return;
    }
    if (line.isRequest && reservedId(line)) {
      const message = `mcp-roots-proxy: request ids that start with "${OWN_ID_PREFIX}" are the proxy's own; use another id`;
      this.toHost(errorLine(line.idText!, { code: RpcCode.INVALID_REQUEST, message }));
      return;
    }
    this.hostLines.push(line);
  }

  /**
   * Admit one host line (in-order.ts says what keeps its order). Everything here is synchronous
   * but the wait for a restart: a request whose handling must wait (a checked call, a 2026-07-28
   * retry that waits for the roots) is registered as pending and goes on beside the queue.
   */
  private async onHostLine(line: McpLine): Promise<void> {
    await this.whileHeld();
    const { method, isRequest } = line;
    if (method === undefined) return;
    const era = this.era.of(line);
    if (isRequest && this.serverGone) return this.requests.refuseServerGone(line);
    if (this.session.refusesUnknownServer(line)) return;
    if (this.requests.refusedDuplicate(line)) return;
    const { enforce } = this.settings;
    switch (method) {
      case 'initialize':
        if (isRequest) return this.onInitialize(line);
        break;
      case 'notifications/initialized':
        this.toServer(line.bytes);
        this.onInitialized();
        return;
      case 'notifications/roots/list_changed':
        // The host's own roots are not the policy's.
        this.settings.log.debug('dropped the host’s notifications/roots/list_changed');
        return;
      case 'notifications/cancelled':
        // A cancelled subscriptions/listen stream is no longer the host's to restore.
        if (line.cancelledKey !== undefined) this.subscriptions.ended(line.cancelledKey);
        return this.requests.cancel(line);
      case 'notifications/progress':
        // Progress on a server request that the proxy answered: the server never asked the host.
        if (this.roots.answeredToken(line.progressTokenKey)) return;
        break;
      case 'logging/setLevel':
        if (isRequest && this.session.answersSetLevel(line)) return;
        break;
      case 'tools/call':
        if (isRequest && enforce) {
          this.learnTools();
          return this.requests.admitPending(line, era, async (signal) => {
            // A retry bringing the answer to the proxy's own question goes on as the call asked
            // about (undefined: the proxy answered it).
            const call = await this.askByInput.resume(line);
            if (call === undefined) return undefined;
            return (await this.gate.refusedToolCall(call, era, signal)) ? undefined : call;
          });
        }
        break;
      case 'resources/read':
        if (isRequest && enforce) {
          this.learnTools();
          return this.requests.admitPending(line, era, async (signal) =>
            (await this.gate.refusedResourceRead(line, era, signal)) ? undefined : line,
          );
        }
        break;
      case 'resources/subscribe':
      case 'resources/unsubscribe':
      case 'subscriptions/listen':
        this.subscriptions.onHost(line);
        break;
    }
    if (!isRequest) return this.toServer(line.bytes);
    // A 2026-07-28 request that may be answered `input_required` may wait for the policy's roots.
    if (era === 'modern' && INPUT_REQUIRED_METHODS.has(method))
      return this.requests.admitPending(line, era);
    void this.requests.relay(line, era);
  }

  /** Resolves once no restart holds the host's messages. */
  private async whileHeld(): Promise<void> {
    while (this.held !== undefined) await this.held;
  }

  /**
   * Ask for the server's tools if nobody has yet: before the first call in a session without a
   * handshake (2026-07-28), or whose host never sent `initialized`, the call waits for the list.
   */
  private learnTools(): void {
    if (!this.catalog.started && this.serverHasTools) void this.catalog.refresh();
  }

  /** `params` with the `_meta` envelope a 2026-07-28 server requires, when the host speaks it. */
  private withOwnMeta(params: JsonObject): JsonObject {
    const meta = this.era.ownMeta(this.roots.hasRoots);
    return meta === undefined ? params : { ...params, _meta: meta };
  }

  private onInitialize(line: McpLine): void {
    this.initializeKey = line.idKey;
    const caps = line.params.capabilities;
    this.asker.hostElicits = isObject(caps) && formElicitation(caps.elicitation);
    const info = line.params.clientInfo;
    if (isObject(info) && typeof info.name === 'string')
      this.asker.client = info.name.slice(0, 200);
    this.era.noteInitialize();
    const version = line.params.protocolVersion;
    if (typeof version === 'string') this.roots.protocolVersion = version;
    this.relayed.track(line.idText, 'initialize');
    const text = withRootsCapability(line.text);
    this.initializeParamsText = memberText(text, 'params');
    this.toServer(text);
  }

  private onInitialized(): void {
    if (this.initialized) return;
    this.initialized = true;
    if (this.settings.enforce && this.serverHasTools) void this.catalog.refresh();
    this.roots.onInitialized();
  }

  // ---- server to host ----

  private onServerData(chunk: Buffer): void {
    for (const bytes of this.serverSplitter.push(chunk)) this.onServerLine(bytes);
  }

  private onServerEnd(): void {
    if (this.serverGone) return;
    const rest = this.serverSplitter.end();
    if (rest !== undefined) this.onServerLine(rest);
    this.own.failAll();
    // The host would otherwise wait for ever for answers that cannot come.
    this.serverGone = true;
    this.relayed.failAll(this.toHost, this.settings.log);
    this.emit('serverClosed');
  }

  private onServerLine(bytes: Buffer, inBatch = false): void {
    if (bytes.length === 0 || (bytes.length === 1 && bytes[0] === 0x0d)) return;
    if (looksLikeBatch(bytes)) return this.onServerBatch(bytes, inBatch);
    const line = new McpLine(bytes);
    const { msg, method } = line;
    if (msg === undefined) {
      this.settings.log.warn(
        `dropped a line from the server that is not a JSON-RPC message: ${line.text.slice(0, 200)}`,
      );
      return;
    }
    if (line.isResponse) return this.onServerResponse(line, msg);
    if (method === undefined) {
      // The host's stdout carries only MCP frames: a JSON object that is none is garbage too.
      this.settings.log.warn(
        `dropped a JSON line from the server that is not a JSON-RPC message: ${line.text.slice(0, 200)}`,
      );
      return;
    }
    const unreadable = unreadableServerLine(line);
    if (unreadable !== undefined) {
      // A host's reader might take it for another message (an id in the proxy's namespace).
      const message = `mcp-roots-proxy: ${unreadable}; send each key once, spelled exactly`;
      this.settings.log.warn(`refused the server's ${method}: ${message}`);
      if (line.isRequest) {
        this.toServer(errorLine(line.idText!, { code: RpcCode.INVALID_REQUEST, message }));
      }
      return;
    }
    if (line.isRequest && reservedId(line)) {
      // The host's answer would be taken for one to the proxy's own question to the person.
      const message = `mcp-roots-proxy: request ids that start with "${OWN_ID_PREFIX}" are the proxy's own; use another id`;
      this.settings.log.warn(`refused the server's ${method}: ${message}`);
      this.toServer(errorLine(line.idText!, { code: RpcCode.INVALID_REQUEST, message }));
      return;
    }
    // An id the server uses again is no longer the open request the host may answer.
    if (line.isRequest) this.serverAsked.take(line.idKey);
    if (method === 'roots/list' && line.isRequest) return this.roots.onRootsList(line);
    if (method === 'notifications/cancelled' && this.serverCancelled(line)) return;
    // A restarted server acknowledges the host's stream again; the host has had its answer.
    if (this.subscriptions.consumeAck(line)) return;
    if (
      method === 'notifications/tools/list_changed' &&
      this.settings.enforce &&
      (this.initialized || this.catalog.started)
    ) {
      void this.catalog.refresh();
    }
    if (line.isRequest) this.serverAsked.add(line.idKey);
    this.toHost(line.bytes);
  }

  /** A server's cancellation: true when it goes no further than the proxy. */
  private serverCancelled(line: McpLine): boolean {
    const key = line.cancelledKey;
    this.serverAsked.take(key);
    // The proxy's question to the host is the proxy's to withdraw.
    return isOwnKey(key) || this.roots.consumeCancel(key);
  }

  /** Each element of a server's batch is handled as if it had come alone; nothing else passes. */
  private onServerBatch(bytes: Buffer, inBatch: boolean): void {
    const elements = inBatch ? undefined : batchElements(bytes.toString('utf8'));
    if (elements === undefined) {
      this.settings.log.warn(
        `dropped a line from the server that is not a JSON-RPC message: ${bytes.toString('utf8').slice(0, 200)}`,
      );
      return;
    }
    for (const element of elements) this.onServerLine(Buffer.from(element, 'utf8'), true);
  }

  private onServerResponse(line: McpLine, msg: JsonObject): void {
    // First: the proxy's retries of a host request carry ids of the proxy's own.
    if (this.inputs.onAnswer(line)) return;
    if (this.own.isOwn(msg)) return this.own.settle(msg);
    const key = line.idKey;
    if (key !== undefined) {
      this.relayed.settled(key);
      this.subscriptions.ended(key);
    }
    if (key !== undefined && key === this.initializeKey) {
      this.onInitializeResult(msg.result);
      const text = this.session.initializeResult(line.text);
      this.toHost(text === line.text ? line.bytes : text);
      this.session.opened();
      return;
    }
    this.toHost(line.bytes);
  }

  private onInitializeResult(result: unknown): void {
    if (!isObject(result)) return;
    if (typeof result.protocolVersion === 'string') {
      this.roots.protocolVersion = result.protocolVersion;
    }
    const caps = isObject(result.capabilities) ? result.capabilities : {};
    this.serverCaps = caps;
    this.serverHasTools = caps.tools !== undefined;
  }

  // ---- another server behind the same host session ----

  /** Listen to `server` as the one the host talks to. */
  private attach(server: ServerEndpoint): void {
    this.server = server;
    this.serverAsked.clear();
    this.serverSplitter = new LineSplitter();
    this.serverGone = false;
    const out = server.serverOut;
    out.on('data', this.onOut.data).on('end', this.onOut.end).on('error', this.onOut.error);
    // Destroyed without an end (run.ts gives up on an output a grandchild holds open).
    out.on('close', this.onOut.end);
    server.serverIn.on('error', (err) => this.settings.log.debug(`server input: ${err.message}`));
  }

  /** Stop listening to the current server: what it says or does from now on reaches no one. */
  private detach(): void {
    const out = this.server.serverOut;
    out.off('data', this.onOut.data).off('end', this.onOut.end).off('error', this.onOut.error);
    out.off('close', this.onOut.end);
    out.on('error', () => {});
    // Its output must not stay paused for a host that no longer reads it.
    this.server.serverOut.resume();
    this.own.failAll();
  }

  /** Replace the server with the one `plan` starts, behind the host's back (server-swap.ts). */
  swapServer(plan: SwapPlan): Promise<void> {
    const router: SwapRouter = {
      holdHost: () => {
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        this.held = held;
        return () => {
          if (this.held === held) this.held = undefined;
          release();
        };
      },
      inFlight: () => this.relayed.size,
      whenAnswered: () => this.relayed.whenEmpty(),
      failInFlight: (why) => this.relayed.failAll(this.toHost, this.settings.log, why),
      detach: () => this.detach(),
      attach: (server) => this.attach(server),
      request: (method, params) => this.own.request(method, this.withOwnMeta(params)),
      withEnvelope: (params) => this.withOwnMeta(params),
      initializeParams: () =>
        this.initializeParamsText === undefined
          ? undefined
          : (JSON.parse(this.initializeParamsText) as JsonObject),
      initialized: (result) => this.onInitializeResult(result),
      capabilities: () => this.serverCaps,
      toServer: (line) => this.toServer(line),
      toHost: (line) => this.toHost(line),
      subscriptions: this.subscriptions,
      refreshTools: () => {
        // A 2026-07-28 session has no `initialized`: its tools were learnt at its first call.
        const learnt = this.initialized || this.catalog.started;
        if (this.settings.enforce && learnt && this.serverHasTools) {
          void this.catalog.refresh();
        }
      },
    };
    return swapServer(router, plan);
  }
}

/** Whether a request's id is in the namespace of the proxy's own requests. */
function reservedId(line: McpLine): boolean {
  return isOwnKey(line.idKey);
}
