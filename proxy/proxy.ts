/** The relay between an MCP host and one stdio MCP server, stepping in only where ARCHITECTURE.md says. */
import { EventEmitter } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { errnoCode, RootsError } from '../common/errors.js';
import type { Access, Root } from '../common/types.js';
import type { DaemonLink, RootsChange } from './daemon-link.js';
import { pathValues, type ArgumentRefusal, type PathValue } from './arguments.js';
import { checkValues, showPath, type Refusal } from './enforce.js';
import { idKey, memberText, setMember } from './json-text.js';
import { LineSplitter } from './line-splitter.js';
import type { ProxyLogger } from './log.js';
import { ToolTable, type ToolInfo } from './tool-table.js';

/** How often one request is retried with roots answers before the proxy gives up. */
const MAX_ROOTS_RETRIES = 3;

/** The prefix of the proxy's own request ids: the host's ids cannot collide with these. */
export const OWN_ID_PREFIX = 'mcp-roots-proxy:';

/** The first MCP revision whose `Root` has `_meta`. */
const ROOT_META_SINCE = '2025-06-18';

/** Options for `RootsProxy`. */
export interface RootsProxyOptions {
  server: string;
  enforce: boolean;
  link: DaemonLink;
  log: ProxyLogger;
  /** The host's side: the proxy's stdin and stdout. */
  hostIn: Readable;
  hostOut: Writable;
  /** The server's side: the child's stdin and stdout. */
  serverIn: Writable;
  serverOut: Readable;
  /** How long the server's `roots/list` waits for an unreachable daemon (default 3 s). */
  rootsWaitMs?: number;
  /** How long tool calls wait for the server to fetch a list with a new root (default 2 s). */
  holdMs?: number;
  /** How long a tool call waits for the proxy's own `tools/list` (default 5 s). */
  toolsWaitMs?: number;
  /** Limit for the proxy's own requests to the server (default 10 s). */
  requestTimeoutMs?: number;
}

/** Events of `RootsProxy`: either side has closed its output. */
export interface RootsProxyEvents {
  hostClosed: [];
  serverClosed: [];
}

type Json = Record<string, unknown>;

interface Line {
  bytes: Buffer;
  text: string;
  /** The parsed object, or undefined for a line that is not a JSON object. */
  msg: Json | undefined;
}

interface Pending {
  resolve: (result: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
}

const NL = Buffer.from('\n');

const SERVER_GONE = 'the MCP server exited or closed its output (see the proxy’s stderr)';

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseLine(bytes: Buffer): Line {
  const text = bytes.toString('utf8');
  let msg: Json | undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (isObject(value)) msg = value;
  } catch {
    msg = undefined;
  }
  return { bytes, text, msg };
}

function isResponse(msg: Json): boolean {
  return msg.method === undefined && 'id' in msg && ('result' in msg || 'error' in msg);
}

function after<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Remembers the last few keys (answered ids, progress tokens) without growing for ever. */
class RecentKeys {
  private readonly keys = new Set<string>();
  constructor(private readonly max = 1024) {}
  add(key: string | undefined): void {
    if (key === undefined) return;
    this.keys.add(key);
    if (this.keys.size > this.max) {
      const first = this.keys.values().next();
      if (first.done !== true) this.keys.delete(first.value);
    }
  }
  has(key: string | undefined): boolean {
    return key !== undefined && this.keys.has(key);
  }
}

/** Relays MCP lines between a host and a server, and answers for roots and enforcement. */
export class RootsProxy extends EventEmitter<RootsProxyEvents> {
  private readonly o: Required<RootsProxyOptions>;
  private readonly hostSplitter = new LineSplitter();
  private readonly serverSplitter = new LineSplitter();
  /** Host lines wait here so that a call being checked keeps its place in the order. */
  private readonly hostQueue: Line[] = [];
  private pumping = false;
  private hostEnded = false;

  private initialized = false;
  private initializeKey: string | undefined;
  /** The negotiated protocol version (the host's request until the server answers). */
  private protocolVersion: string | undefined;
  private serverHasTools = true;
  /** Set when the daemon's list changed after the server fetched it but before `initialized`. */
  private notifyPending = false;
  private rootsServed = false;

  private tools: ToolTable | undefined;
  private toolsReady: Promise<void> | undefined;
  private toolsRefreshing = false;
  private toolsStale = false;

  private nextId = 1;
  private readonly ownRequests = new Map<string, Pending>();
  /** Server requests the proxy answers (or is about to): their ids, and their progress tokens. */
  private readonly answeredServer = new RecentKeys();
  private readonly cancelledServer = new RecentKeys();
  private readonly answeredServerTokens = new RecentKeys();
  /** Host requests the proxy answered itself (refused calls). */
  private readonly answeredHost = new RecentKeys();

  /** Tool calls wait on this after a root was added, until the server has fetched the new list. */
  private hold: { promise: Promise<void>; release: () => void } | undefined;

  /** 2026-07-28 sessions: how often the proxy has retried each request with roots answers. */
  private readonly rootsRetries = new Map<string, number>();
  /** 2026-07-28 sessions: host requests in flight (by id key), and roots answers owed to a retry. */
  private readonly inFlight = new Map<string, string>();
  private readonly owedInputs = new Map<string, string>();
  /** 2026-07-28 sessions: the keys under which the server asked for roots/list. */
  private readonly rootsInputKeys = new RecentKeys();

  /** Host requests relayed to the server and not yet answered (id key to id text and method). */
  private readonly relayed = new Map<string, { id: string; method: string }>();
  /** Set once the server has closed its output: nothing it was asked will be answered. */
  private serverGone = false;

  constructor(options: RootsProxyOptions) {
    super();
    this.o = {
      rootsWaitMs: 3000,
      holdMs: 2000,
      toolsWaitMs: 5000,
      requestTimeoutMs: 10_000,
      ...options,
    };
    const { hostIn, serverOut, link } = this.o;
    hostIn.on('data', (chunk: Buffer) => this.onHostData(chunk));
    hostIn.on('end', () => this.onHostEnd());
    hostIn.on('error', (err) => this.o.log.debug(`host input: ${err.message}`));
    serverOut.on('data', (chunk: Buffer) => this.onServerData(chunk));
    serverOut.on('end', () => this.onServerEnd());
    // Destroyed without an end (run.ts gives up on an output a grandchild holds open).
    serverOut.on('close', () => this.onServerEnd());
    serverOut.on('error', (err) => this.o.log.debug(`server output: ${err.message}`));
    this.o.serverIn.on('error', (err) => this.o.log.debug(`server input: ${err.message}`));
    this.o.hostOut.on('error', (err: Error) => {
      // The host went away: there is nobody left to serve.
      if (errnoCode(err) === 'EPIPE' || errnoCode(err) === 'ERR_STREAM_DESTROYED')
        this.emit('hostClosed');
      else this.o.log.error(`writing to the host: ${err.message}`);
    });
    link.on('roots', (roots, change) => this.onDaemonRoots(roots, change));
    link.on('lost', () => this.onDaemonLost());
  }

  // ---- host to server ----

  private onHostData(chunk: Buffer): void {
    for (const bytes of this.hostSplitter.push(chunk)) this.acceptHostLine(bytes);
  }

  private onHostEnd(): void {
    const rest = this.hostSplitter.end();
    if (rest !== undefined) this.acceptHostLine(rest);
    this.hostEnded = true;
    void this.pump();
  }

  private acceptHostLine(bytes: Buffer): void {
    const line = parseLine(bytes);
    // Answers to the server's requests never wait behind a held call.
    if (line.msg !== undefined && isResponse(line.msg)) {
      this.toServer(line.bytes);
      return;
    }
    this.hostQueue.push(line);
    void this.pump();
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (let line = this.hostQueue.shift(); line !== undefined; line = this.hostQueue.shift()) {
        try {
          await this.onHostLine(line);
        } catch (err) {
          this.o.log.error(`handling a host message: ${(err as Error).stack ?? String(err)}`);
        }
      }
    } finally {
      this.pumping = false;
    }
    if (this.hostEnded && this.hostQueue.length === 0) {
      this.o.serverIn.end();
      this.emit('hostClosed');
    }
  }

  private async onHostLine(line: Line): Promise<void> {
    const { msg } = line;
    if (msg === undefined || typeof msg.method !== 'string') {
      this.toServer(line.bytes);
      return;
    }
    const params = isObject(msg.params) ? msg.params : {};
    const isRequest = 'id' in msg;
    if (isRequest && this.serverGone) {
      this.answerHostError(line, -32603, `mcp-roots-proxy: ${msg.method} not sent: ${SERVER_GONE}`);
      return;
    }
    switch (msg.method) {
      case 'initialize':
        if (isRequest) return this.onInitialize(line, params);
        break;
      case 'notifications/initialized':
        this.toServer(line.bytes);
        this.onInitialized();
        return;
      case 'notifications/roots/list_changed':
        // The host's own roots are not the policy's.
        this.o.log.debug('dropped the host’s notifications/roots/list_changed');
        return;
      case 'notifications/cancelled': {
        const key = idKey(memberText(memberText(line.text, 'params') ?? '{}', 'requestId'));
        if (key !== undefined) {
          this.inFlight.delete(key);
          this.relayed.delete(key);
        }
        if (this.answeredHost.has(key)) return;
        break;
      }
      case 'notifications/progress':
        // Progress on a server request that the proxy answered: the server never asked the host.
        if (this.answeredServerTokens.has(tokenKey(params))) return;
        break;
      case 'tools/call':
        if (isRequest && this.o.enforce) return this.onToolCall(line, params);
        break;
      case 'resources/read':
        if (isRequest && this.o.enforce) return this.onResourceRead(line, params);
        break;
    }
    if (isRequest) this.relayRequest(line, params);
    else this.toServer(line.bytes);
  }

  private onInitialize(line: Line, params: Json): void {
    this.initializeKey = idKey(memberText(line.text, 'id'));
    if (typeof params.protocolVersion === 'string') this.protocolVersion = params.protocolVersion;
    const paramsText = memberText(line.text, 'params') ?? '{}';
    const caps = memberText(paramsText, 'capabilities');
    const capsText = caps !== undefined && caps.startsWith('{') ? caps : '{}';
    const newCaps = setMember(capsText, 'roots', '{"listChanged":true}');
    const newParams = setMember(paramsText, 'capabilities', newCaps);
    this.track(line.text, 'initialize');
    this.toServer(setMember(line.text, 'params', newParams));
  }

  private onInitialized(): void {
    if (this.initialized) return;
    this.initialized = true;
    if (this.o.enforce && this.serverHasTools) void this.refreshTools();
    if (this.notifyPending) {
      this.notifyPending = false;
      this.notifyServer();
    }
  }

  private async onToolCall(line: Line, params: Json): Promise<void> {
    if (this.hold !== undefined) await this.hold.promise;
    const name = typeof params.name === 'string' ? params.name : '';
    const args = isObject(params.arguments) ? params.arguments : {};
    const info = await this.toolInfo(name, args);
    const values = pathValues(args, info.inputSchema, info.declaredPaths);
    if (!Array.isArray(values) || values.length > 0) {
      const access: Access = info.readOnly ? 'read' : 'write';
      const refusal = await this.checkPaths(values, access);
      if (refusal !== undefined) {
        this.o.log.info(`refused ${name}: ${refusal.reason}`);
        this.answerHost(line, {
          content: [
            {
              type: 'text',
              text: `mcp-roots-proxy refused ${name} on ${showPath(refusal.path)}: ${refusal.reason}`,
            },
          ],
          isError: true,
        });
        return;
      }
    }
    this.relayRequest(line, params);
  }

  private async onResourceRead(line: Line, params: Json): Promise<void> {
    if (this.hold !== undefined) await this.hold.promise;
    const uri = params.uri;
    if (typeof uri === 'string' && /^file:/i.test(uri)) {
      const refusal = await this.checkPaths([{ value: uri, uri: true, where: 'uri' }], 'read');
      if (refusal !== undefined) {
        this.o.log.info(`refused resources/read: ${refusal.reason}`);
        this.answerHostError(
          line,
          -32002,
          `mcp-roots-proxy refused ${showPath(uri)}: ${refusal.reason}`,
        );
        return;
      }
    }
    this.relayRequest(line, params);
  }

  private async checkPaths(
    values: PathValue[] | ArgumentRefusal,
    access: Access,
  ): Promise<Refusal | undefined> {
    const { link } = this.o;
    return checkValues(values, access, async (path, a) => {
      try {
        return await link.check(path, a);
      } catch (err) {
        // A path too long to send: that call alone is refused; the link stays up.
        if (err instanceof RootsError && err.code === 'PATH_INVALID') {
          return { allowed: false, access: a, reason: err.message };
        }
        return {
          allowed: false,
          access: a,
          reason: `${(err as Error).message}; every call with a path is refused until mcp-rootsd answers (start it with \`systemctl --user start mcp-rootsd\` or \`mcp-rootsd\`)`,
        };
      }
    });
  }

  private async toolInfo(name: string, args: Json): Promise<ToolInfo> {
    if (this.tools === undefined && this.toolsReady !== undefined) {
      await after(this.toolsReady, this.o.toolsWaitMs);
    }
    return (this.tools ?? new ToolTable()).get(name, args, this.o.link.tools[name]);
  }

  /** Answer a host request in the server's place. */
  private answerHost(line: Line, result: Json): void {
    const id = memberText(line.text, 'id') ?? 'null';
    this.answeredHost.add(idKey(id));
    this.toHost(`{"jsonrpc":"2.0","id":${id},"result":${JSON.stringify(result)}}`);
  }

  private answerHostError(line: Line, code: number, message: string): void {
    const id = memberText(line.text, 'id') ?? 'null';
    this.answeredHost.add(idKey(id));
    this.toHost(`{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify({ code, message })}}`);
  }

  // ---- server to host ----

  private onServerData(chunk: Buffer): void {
    for (const bytes of this.serverSplitter.push(chunk)) this.onServerLine(bytes);
  }

  private onServerEnd(): void {
    if (this.serverGone) return;
    const rest = this.serverSplitter.end();
    if (rest !== undefined) this.onServerLine(rest);
    for (const [id, p] of this.ownRequests) {
      clearTimeout(p.timer);
      p.reject(new Error('the server closed its output'));
      this.ownRequests.delete(id);
    }
    // The host would otherwise wait for ever for answers that cannot come.
    this.serverGone = true;
    for (const { id, method } of this.relayed.values()) {
      this.o.log.warn(`the server went away before answering ${method}; answered with an error`);
      this.toHost(
        `{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify({ code: -32603, message: `mcp-roots-proxy: no answer to ${method}: ${SERVER_GONE}` })}}`,
      );
    }
    this.relayed.clear();
    this.emit('serverClosed');
  }

  private onServerLine(bytes: Buffer): void {
    if (bytes.length === 0 || (bytes.length === 1 && bytes[0] === 0x0d)) return;
    const line = parseLine(bytes);
    const { msg } = line;
    if (msg === undefined) {
      this.o.log.warn(
        `dropped a line from the server that is not a JSON-RPC message: ${line.text.slice(0, 200)}`,
      );
      return;
    }
    if (isResponse(msg)) return this.onServerResponse(line, msg);
    if (typeof msg.method !== 'string') {
      // The host's stdout carries only MCP frames: a JSON object that is none is garbage too.
      this.o.log.warn(
        `dropped a JSON line from the server that is not a JSON-RPC message: ${line.text.slice(0, 200)}`,
      );
      return;
    }
    const params = isObject(msg.params) ? msg.params : {};
    if (msg.method === 'roots/list' && 'id' in msg) return this.onServerRootsList(line, params);
    if (msg.method === 'notifications/cancelled') {
      const key = idKey(memberText(memberText(line.text, 'params') ?? '{}', 'requestId'));
      if (this.answeredServer.has(key)) {
        this.cancelledServer.add(key);
        return;
      }
    }
    if (msg.method === 'notifications/tools/list_changed' && this.o.enforce && this.initialized) {
      void this.refreshTools();
    }
    this.toHost(line.bytes);
  }

  private onServerResponse(line: Line, msg: Json): void {
    const id = msg.id;
    if (typeof id === 'string' && id.startsWith(OWN_ID_PREFIX)) {
      const pending = this.ownRequests.get(id);
      if (pending === undefined) return;
      this.ownRequests.delete(id);
      clearTimeout(pending.timer);
      if ('error' in msg) pending.reject(new Error(JSON.stringify(msg.error)));
      else pending.resolve(msg.result);
      return;
    }
    const key = idKey(memberText(line.text, 'id'));
    if (key !== undefined) this.relayed.delete(key);
    if (key !== undefined && key === this.initializeKey) this.onInitializeResult(msg.result);
    const request = key === undefined ? undefined : this.inFlight.get(key);
    if (key !== undefined) this.inFlight.delete(key);
    if (
      request !== undefined &&
      isObject(msg.result) &&
      this.onInputRequired(line, request, msg.result)
    ) {
      return;
    }
    if (key !== undefined) this.rootsRetries.delete(key);
    this.toHost(line.bytes);
  }

  private onInitializeResult(result: unknown): void {
    if (!isObject(result)) return;
    if (typeof result.protocolVersion === 'string') this.protocolVersion = result.protocolVersion;
    const caps = isObject(result.capabilities) ? result.capabilities : {};
    this.serverHasTools = caps.tools !== undefined;
  }

  private onServerRootsList(line: Line, params: Json): void {
    const idText = memberText(line.text, 'id') ?? 'null';
    const key = idKey(idText);
    this.answeredServer.add(key);
    this.answeredServerTokens.add(tokenKey(params));
    void this.answerRootsList(idText, key);
  }

  private async answerRootsList(idText: string, key: string | undefined): Promise<void> {
    const { link } = this.o;
    const roots = link.roots ?? (await link.whenKnown(this.o.rootsWaitMs));
    if (this.cancelledServer.has(key)) return;
    if (roots === undefined) {
      this.o.log.warn(
        'answered the server’s roots/list with an empty list: mcp-rootsd is not reachable',
      );
    }
    const list = this.rootsForServer(roots ?? []);
    this.rootsServed = true;
    this.toServer(`{"jsonrpc":"2.0","id":${idText},"result":${JSON.stringify({ roots: list })}}`);
    if (roots !== undefined) this.releaseHold();
  }

  private rootsForServer(roots: Root[]): object[] {
    const v = this.protocolVersion;
    if (v !== undefined && v < ROOT_META_SINCE) {
      return roots.map((r) =>
        r.name === undefined ? { uri: r.uri } : { uri: r.uri, name: r.name },
      );
    }
    return roots;
  }

  // ---- 2026-07-28: roots/list inside InputRequiredResult ----

  /** Relay a host request; in a session without initialize, remember it and add owed roots answers. */
  private relayRequest(line: Line, params: Json): void {
    this.track(line.text, typeof line.msg?.method === 'string' ? line.msg.method : 'a request');
    const key = this.initializeKey === undefined ? idKey(memberText(line.text, 'id')) : undefined;
    if (key === undefined) {
      this.toServer(line.bytes);
      return;
    }
    const text = isObject(params.inputResponses)
      ? this.withOwedInputs(line.text, params.inputResponses)
      : line.text;
    this.inFlight.set(key, text);
    this.toServer(text === line.text ? line.bytes : text);
  }

  /** Remember a host request on its way to the server, so that it is answered if the server dies. */
  private track(text: string, method: string): void {
    const id = memberText(text, 'id');
    const key = idKey(id);
    if (id !== undefined && key !== undefined) this.relayed.set(key, { id, method });
  }

  /** The host's `inputResponses` with the owed roots answers added, and any of its own replaced. */
  private withOwedInputs(text: string, hostResponses: Json): string {
    const paramsText = memberText(text, 'params') ?? '{}';
    const original = memberText(paramsText, 'inputResponses') ?? '{}';
    let responses = original;
    // A roots answer is the policy's, whether the proxy owes it, saw its key, or never saw it.
    for (const [k, v] of Object.entries(hostResponses)) {
      if (this.rootsInputKeys.has(k) || (isObject(v) && 'roots' in v)) {
        this.o.log.info(`replaced the host’s answer to roots/list (${k}) with the policy’s`);
        responses = setMember(responses, k, this.rootsAnswer());
      }
    }
    for (const [k, v] of this.owedInputs) responses = setMember(responses, k, v);
    this.owedInputs.clear();
    if (responses === original) return text;
    return setMember(text, 'params', setMember(paramsText, 'inputResponses', responses));
  }

  private rootsAnswer(): string {
    return JSON.stringify({ roots: this.rootsForServer(this.o.link.roots ?? []) });
  }

  /** Answer roots/list input requests in the host's place; true when the response was consumed. */
  private onInputRequired(line: Line, request: string, result: Json): boolean {
    const inputs = result.inputRequests;
    if (!isObject(inputs)) return false;
    const rootsKeys = Object.keys(inputs).filter(
      (k) => isObject(inputs[k]) && inputs[k].method === 'roots/list',
    );
    if (rootsKeys.length === 0) return false;
    for (const k of rootsKeys) this.rootsInputKeys.add(k);
    const answer = this.rootsAnswer();
    const resultText = memberText(line.text, 'result') ?? '{}';
    if (rootsKeys.length < Object.keys(inputs).length) {
      // Others remain for the host: pass them on, and add ours when the host retries.
      const rest: Json = {};
      for (const [k, v] of Object.entries(inputs)) if (!rootsKeys.includes(k)) rest[k] = v;
      for (const k of rootsKeys) this.owedInputs.set(k, answer);
      const newResult = setMember(resultText, 'inputRequests', JSON.stringify(rest));
      this.toHost(setMember(line.text, 'result', newResult));
      return true;
    }
    // Only roots were asked for: retry the request with the answers, as the host would have.
    const id = memberText(request, 'id');
    const retryKey = idKey(id);
    if (retryKey !== undefined) {
      const tries = (this.rootsRetries.get(retryKey) ?? 0) + 1;
      if (tries > MAX_ROOTS_RETRIES) {
        // A server that asks for roots again and again would keep the proxy retrying for ever.
        this.rootsRetries.delete(retryKey);
        this.toHost(
          `{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify({ code: -32603, message: `the MCP server asked for roots/list ${MAX_ROOTS_RETRIES + 1} times for one request; mcp-roots-proxy gave up` })}}`,
        );
        return true;
      }
      this.rootsRetries.set(retryKey, tries);
    }
    const paramsText = memberText(request, 'params') ?? '{}';
    let responses = '{}';
    for (const k of rootsKeys) responses = setMember(responses, k, answer);
    let newParams = setMember(paramsText, 'inputResponses', responses);
    const state = memberText(resultText, 'requestState');
    if (state !== undefined) newParams = setMember(newParams, 'requestState', state);
    const retry = setMember(request, 'params', newParams);
    const key = idKey(memberText(request, 'id'));
    if (key !== undefined) this.inFlight.set(key, retry);
    // Still owed to the host: answered with an error if the server dies before the retry's answer.
    const method = memberText(request, 'method');
    this.track(retry, method === undefined ? 'a request' : (JSON.parse(method) as string));
    this.toServer(retry);
    return true;
  }

  // ---- roots from the daemon ----

  private onDaemonRoots(_roots: Root[], change: RootsChange): void {
    if (!this.initialized) {
      // A server fetches its roots after initialized anyway; only a list it already has is stale.
      if (this.rootsServed) this.notifyPending = true;
      return;
    }
    if (change.added.length > 0 || change.reconnected) this.startHold();
    this.notifyServer();
  }

  private onDaemonLost(): void {
    // The roots are no longer known: tell the server, whose roots/list will then wait and get [].
    if (this.initialized) this.notifyServer();
  }

  private notifyServer(): void {
    this.toServer('{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}');
  }

  private startHold(): void {
    if (this.hold !== undefined) return;
    let release!: () => void;
    const promise = new Promise<void>((resolve) => {
      release = resolve;
    });
    const timer = setTimeout(() => {
      this.o.log.debug(`the server did not fetch its new roots within ${this.o.holdMs} ms`);
      this.releaseHold();
    }, this.o.holdMs);
    this.hold = {
      promise,
      release: () => {
        clearTimeout(timer);
        release();
      },
    };
  }

  private releaseHold(): void {
    const hold = this.hold;
    if (hold === undefined) return;
    this.hold = undefined;
    // The server applies the list asynchronously (realpath of each root): give it a moment.
    setTimeout(() => hold.release(), 50).unref();
  }

  // ---- the proxy's own requests ----

  private request(method: string, params: Json): Promise<unknown> {
    const id = `${OWN_ID_PREFIX}${this.nextId++}`;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.ownRequests.delete(id);
        reject(new Error(`${method}: no answer within ${this.o.requestTimeoutMs} ms`));
      }, this.o.requestTimeoutMs);
      this.ownRequests.set(id, { resolve, reject, timer });
      this.toServer(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  private refreshTools(): Promise<void> {
    if (this.toolsRefreshing) {
      this.toolsStale = true;
      return this.toolsReady ?? Promise.resolve();
    }
    this.toolsRefreshing = true;
    this.toolsReady = (async () => {
      do {
        this.toolsStale = false;
        try {
          const all: unknown[] = [];
          let cursor: string | undefined;
          for (let page = 0; page < 1000; page++) {
            const result = await this.request('tools/list', cursor === undefined ? {} : { cursor });
            if (!isObject(result)) break;
            if (Array.isArray(result.tools)) all.push(...(result.tools as unknown[]));
            cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
            if (cursor === undefined) break;
          }
          this.tools = new ToolTable(all);
          this.o.log.debug(`learnt ${this.tools.size} tools`);
        } catch (err) {
          this.o.log.warn(`could not list the server’s tools: ${(err as Error).message}`);
        }
      } while (this.toolsStale);
      this.toolsRefreshing = false;
    })();
    return this.toolsReady;
  }

  // ---- writing ----

  private toServer(data: Buffer | string): void {
    const w = this.o.serverIn;
    if (w.destroyed || w.writableEnded) return;
    this.write(w, data, this.o.hostIn);
  }

  private toHost(data: Buffer | string): void {
    const w = this.o.hostOut;
    if (w.destroyed || w.writableEnded) return;
    this.write(w, data, this.o.serverOut);
  }

  private write(w: Writable, data: Buffer | string, source: Readable): void {
    w.write(data);
    // Back-pressure: stop reading the side that feeds a stream which is not keeping up.
    if (!w.write(NL) && !source.isPaused()) {
      source.pause();
      w.once('drain', () => source.resume());
    }
  }
}

function tokenKey(params: Json): string | undefined {
  const meta = isObject(params._meta) ? params._meta : undefined;
  const token = meta?.progressToken;
  if (typeof token === 'string') return `s:${token}`;
  if (typeof token === 'number') return `n:${token}`;
  return undefined;
}
