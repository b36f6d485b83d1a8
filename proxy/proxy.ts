/**
 * The relay between an MCP host and one stdio MCP server. This router only routes: it reads lines
 * from both sides and hands each to the part that handles it (docs/architecture.md, "proxy").
 */
import { EventEmitter } from 'node:events';
import { homedir } from 'node:os';
import { errnoCode } from '../common/errors.js';
import { canonicalHome } from '../common/too-wide.js';
import { errorLine, idKey, type JsonObject } from '../protocol/messages.js';
import { RpcCode } from '../protocol/rpc-errors.js';
import { untilCancelled, withinLimit } from './abortable.js';
import { AskByInput } from './ask-by-input.js';
import { AskPerson } from './ask-person.js';
import { CallGate } from './call-gate.js';
import { SessionEra } from './era.js';
import { Handshake } from './handshake.js';
import { HostLines } from './host-lines.js';
import { HostRequests } from './host-requests.js';
import { HostSubscriptions } from './host-subscriptions.js';
import { isFileUri } from './file-uri.js';
import { InOrder } from './in-order.js';
import { InputRequired, mayWaitForRoots } from './input-required.js';
import { writeLine } from './line-writer.js';
import type { McpLine } from './mcp-line.js';
import { OpenIds } from './open-ids.js';
import { OWN_ID_PREFIX, OwnRequests } from './own-requests.js';
import { RelayedRequests } from './relayed.js';
import { RootsHold } from './roots-hold.js';
import { GitWrites } from './git-writes.js';
import { ServerLines } from './server-lines.js';
import { ServerRoots } from './server-roots.js';
import { SessionHealth } from './session-health.js';
import { swapServer, type ServerEndpoint, type SwapPlan, type SwapRouter } from './server-swap.js';
import { ToolCatalog } from './tool-catalog.js';
import { PROXY_DEFAULTS, type RootsProxyEvents, type RootsProxyOptions } from './proxy-options.js';

export { OWN_ID_PREFIX } from './own-requests.js';
export type { RootsProxyEvents, RootsProxyOptions } from './proxy-options.js';

/** Relays MCP lines between a host and a server, and answers for roots and enforcement. */
export class RootsProxy extends EventEmitter<RootsProxyEvents> {
  /** The options with every default filled in. */
  private readonly settings: Required<RootsProxyOptions>;
  /** The host's lines up to their admission (host-lines.ts). */
  private readonly hostLines: HostLines;
  /** The server's lines, each to the part it belongs to (server-lines.ts). */
  private readonly serverLines: ServerLines;
  /** The server the host talks to now; a restart puts another one here (server-swap.ts). */
  private server: ServerEndpoint;
  private readonly onOut: {
    data: (chunk: Buffer) => void;
    end: () => void;
    error: (err: Error) => void;
  };
  /** While a restart runs, host messages wait on this. */
  private held: Promise<void> | undefined;
  /** Requests the server sent the host, by id: the only ones a host answer may go back to. */
  private readonly serverAsked = new OpenIds();
  /** What the host subscribed to, restored on a restarted server. */
  private readonly subscriptions = new HostSubscriptions();
  /** Host lines are admitted here in arrival order; checks run beside it (in-order.ts). */
  private readonly admission: InOrder<McpLine>;
  /** The host's requests: pending while checked, relayed, or answered by the proxy. */
  private readonly requests: HostRequests;
  /** An unknown `--server` name and an unreachable daemon, as the host sees them. */
  private readonly session: SessionHealth;

  /** What the host's `initialize` and the server's answer said. */
  private readonly handshake: Handshake;
  /** The era of each host request, and the envelope the proxy's own requests copy. */
  private readonly era = new SessionEra();
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
  /** Calls wait here while the server fetches and applies a list (roots-hold.ts). */
  private readonly hold: RootsHold;
  private readonly gitWrites: GitWrites;
  private readonly relayed = new RelayedRequests((key) => this.gitWrites.done(key));
  private readonly roots: ServerRoots;
  private readonly catalog: ToolCatalog;
  private readonly gate: CallGate;
  private readonly inputs: InputRequired;

  constructor(options: RootsProxyOptions) {
    super();
    this.settings = { ...PROXY_DEFAULTS, home: homedir(), ...options };
    const { hostIn, hostOut, serverIn, serverOut, link, log } = this.settings;
    this.server = { serverIn, serverOut };
    const toServer = (data: Buffer | string): void => writeLine(this.server.serverIn, data, hostIn);
    const toHost = (data: Buffer | string): void => writeLine(hostOut, data, this.server.serverOut);
    const hold = new RootsHold(this.settings.holdMs, log);
    this.hold = hold;
    this.gitWrites = new GitWrites(log);
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
      restarted: () => withinLimit(this.settings.restartsSettled(), this.settings.requestTimeoutMs),
      home: canonicalHome(this.settings.home),
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
      holdMs: this.settings.holdMs,
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
      gitWrites: this.gitWrites,
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
      listMark: () => link.listMark,
      unaskedRootsHint: () =>
        this.roots.hasRoots && !this.settings.rootsOnCommandLine()
          ? `a tool call failed, and the server has not asked for roots in this 2026-07-28 session: a server of this revision gets them only by asking, and many never do but take their directories on the command line. If it is one of those, put {roots} where its directories go in its command (mcp-roots-proxy --server ${this.settings.server} -- COMMAND ... {roots}); the proxy then starts it with the policy's roots and restarts it when they change`
          : undefined,
    });
    this.toServer = toServer;
    this.toHost = toHost;
    this.session = new SessionHealth({
      server: this.settings.server,
      link,
      allowUnknownServer: this.settings.allowUnknownServer,
      log,
      toHost,
    });
    this.handshake = new Handshake({
      asker: this.asker,
      era: this.era,
      roots: this.roots,
      relayed: this.relayed,
      session: this.session,
      toServer,
      toHost,
    });
    this.requests = new HostRequests({
      log,
      toServer,
      toHost,
      inputs: this.inputs,
      relayed: this.relayed,
      hasRoots: () => this.roots.hasRoots,
      whileHeld: () => this.whileHeld(),
      serverGone: () => this.serverGone,
      beside: (task) => this.admission.besideQueue(task),
    });
    this.admission = new InOrder(
      (line) => this.onHostLine(line),
      (err) => log.error(`handling a host message: ${(err as Error).stack ?? String(err)}`),
      () => {
        this.server.serverIn.end();
        this.emit('hostClosed');
      },
    );
    this.hostLines = new HostLines({
      log,
      toServer,
      toHost,
      hostOwn: this.hostOwn,
      serverAsked: this.serverAsked,
      answeredInBatch: (key) => this.requests.answeredInBatch(key),
      admit: (line) => this.admission.push(line),
    });
    this.serverLines = new ServerLines({
      log,
      toServer,
      toHost,
      own: this.own,
      inputs: this.inputs,
      relayed: this.relayed,
      subscriptions: this.subscriptions,
      roots: this.roots,
      serverAsked: this.serverAsked,
      // Checked as a subscription to it would be: not at all without enforcement.
      updateRefusal: (uri) =>
        this.settings.enforce && isFileUri(uri) ? this.gate.uriRefusal([uri]) : undefined,
      checkAsks: this.settings.enforce,
      toolsChanged: () => {
        if (this.settings.enforce && (this.handshake.initialized || this.catalog.started))
          void this.catalog.refresh();
      },
      answered: (line, msg) => {
        if (!this.handshake.answered(line, msg)) toHost(line.bytes);
      },
      strayAnswer: (key) => this.requests.strayAnswer(key),
    });
    this.onOut = {
      data: (chunk) => this.serverLines.push(chunk),
      end: () => this.onServerEnd(),
      error: (err) => log.debug(`server output: ${err.message}`),
    };

    // An update's check asked under the old policy is not lent to updates sent under the new one.
    const policyMoved = (): void => this.serverLines.policyMoved();
    link.on('roots', policyMoved);
    link.on('lost', policyMoved);

    hostIn.on('data', (chunk: Buffer) => this.hostLines.push(chunk));
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

  private onHostEnd(): void {
    this.hostLines.end();
    this.hostOwn.failAll('the host closed its output');
    this.admission.end();
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
        if (isRequest) return this.handshake.onInitialize(line);
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
          let checkedKey: string | undefined;
          return this.requests.admitPending(
            line,
            era,
            async (signal) => {
              // A retry bringing the answer to the proxy's own question goes on as the call
              // asked about (undefined: the proxy answered it).
              const call = await this.askByInput.resume(line);
              if (call === undefined) return undefined;
              checkedKey = call.idKey;
              return (await this.gate.refusedToolCall(call, era, signal)) ? undefined : call;
            },
            undefined,
            // A write that is not on its way to the server (refused, cancelled, server gone)
            // lets the next git-named write go; one that is waits for its answer (relayed.ts).
            () => {
              for (const key of [line.idKey, checkedKey])
                if (key !== undefined && !this.relayed.has(key)) this.gitWrites.done(key);
            },
          );
        }
        // Unchecked (--no-enforce, a sandbox alone), a call still waits for the roots the server
        // is fetching: it would otherwise find no allowed directory, as a checked one would.
        if (isRequest && this.hold.closed) {
          return this.requests.admitPending(line, era, async (signal) => {
            await untilCancelled(this.hold.passed(), signal);
            return line;
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
      case 'prompts/get':
        if (isRequest && enforce) {
          return this.requests.admitPending(line, era, async (signal) =>
            (await this.gate.refusedPromptGet(line, era, signal)) ? undefined : line,
          );
        }
        break;
      case 'completion/complete':
        if (isRequest && enforce) {
          return this.requests.admitPending(line, era, async (signal) =>
            (await this.gate.refusedCompletion(line, era, signal)) ? undefined : line,
          );
        }
        break;
      case 'resources/subscribe':
      case 'subscriptions/listen':
        if (isRequest && enforce) {
          // Kept for a restarted server only once relayed: a refused one is nobody's to restore.
          return this.requests.admitPending(
            line,
            era,
            async (signal) =>
              (await this.gate.refusedSubscription(line, era, signal)) ? undefined : line,
            () => this.subscriptions.onHost(line),
          );
        }
        this.subscriptions.onHost(line);
        break;
      case 'resources/unsubscribe':
        this.subscriptions.onHost(line);
        break;
    }
    // A method MCP does not define, whose params name a path: checked as a write, since what the
    // server does with it is unknown. A notification cannot be answered: one refused is dropped,
    // and its check holds the lines after it, so that it keeps its place among them.
    const other = enforce ? this.gate.otherPaths(line) : undefined;
    if (other !== undefined && !isRequest) {
      const refused = await this.gate.otherNotificationRefusal(line, other);
      if (refused === undefined) return this.toServer(line.bytes);
      this.settings.log.warn(`dropped the host's ${JSON.stringify(method)}: ${refused}`);
      return;
    }
    if (other !== undefined) {
      return this.requests.admitPending(line, era, async (signal) =>
        (await this.gate.refusedOtherRequest(line, era, other, signal)) ? undefined : line,
      );
    }
    if (!isRequest) return this.toServer(line.bytes);
    // A request that may wait for the policy's roots (a 2026-07-28 one that may be answered
    // `input_required`, or a retry carrying answers, of any method) waits as pending: a
    // cancellation meanwhile stops it.
    if (mayWaitForRoots(line, era)) return this.requests.admitPending(line, era);
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
    if (!this.catalog.started && this.handshake.serverHasTools) void this.catalog.refresh();
  }

  /** `params` with the `_meta` envelope a 2026-07-28 server requires, when the host speaks it. */
  private withOwnMeta(params: JsonObject): JsonObject {
    const meta = this.era.ownMeta(this.roots.hasRoots);
    return meta === undefined ? params : { ...params, _meta: meta };
  }

  private onInitialized(): void {
    if (!this.handshake.noteInitialized()) return;
    if (this.settings.enforce && this.handshake.serverHasTools) void this.catalog.refresh();
    this.roots.onInitialized();
  }

  // ---- server to host ----

  private onServerEnd(): void {
    if (this.serverGone) return;
    this.serverLines.end();
    this.own.failAll();
    // The host would otherwise wait for ever for answers that cannot come.
    this.serverGone = true;
    this.relayed.failAll(this.toHost, this.settings.log);
    this.emit('serverClosed');
  }

  // ---- another server behind the same host session ----

  /** Listen to `server` as the one the host talks to. */
  private attach(server: ServerEndpoint): void {
    this.server = server;
    // The new server has asked the host nothing yet: no answer is owed to it.
    this.serverAsked.clear();
    // Nor will it answer what the old one was asked.
    this.requests.serverReplaced();
    this.serverLines.restart();
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
      failInFlight: (why) => {
        this.relayed.failAll(this.toHost, this.settings.log, why);
        // A retry still waiting for the policy's roots must not reach the next server.
        this.inputs.forgetAll();
      },
      detach: () => this.detach(),
      attach: (server) => this.attach(server),
      request: (method, params) => this.own.request(method, this.withOwnMeta(params)),
      withEnvelope: (params) => this.withOwnMeta(params),
      initializeParams: () => this.handshake.initializeParams(),
      opened: () => this.era.opened,
      initialized: (result) => this.handshake.onResult(result),
      capabilities: () => this.handshake.serverCaps,
      toServer: (line) => this.toServer(line),
      toHost: (line) => this.toHost(line),
      subscriptions: this.subscriptions,
      // Checked as when the host subscribed: not at all without enforcement.
      uriRefusal: (uris) =>
        this.settings.enforce ? this.gate.uriRefusal(uris) : Promise.resolve(undefined),
      endStream: (stream, message) => {
        const key = idKey(stream.idText);
        if (key !== undefined) {
          this.subscriptions.ended(key);
          this.relayed.settled(key);
        }
        this.toHost(errorLine(stream.idText, { code: RpcCode.INVALID_PARAMS, message }));
      },
      refreshTools: () => {
        // A 2026-07-28 session has no `initialized`: its tools were learnt at its first call.
        const learnt = this.handshake.initialized || this.catalog.started;
        if (this.settings.enforce && learnt && this.handshake.serverHasTools) {
          void this.catalog.refresh();
        }
      },
    };
    return swapServer(router, plan);
  }
}
