/** `RootsClient`: the library a program uses to ask mcp-rootsd for roots, checks, grants and status. */
import { EventEmitter } from 'node:events';
import { createConnection, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { startSentence } from '../common/command-line.js';
import { errnoCode, RootsError } from '../common/errors.js';
import { stateDir } from '../common/locations.js';
import type { Access, CheckResult, ExplainResult } from '../common/types.js';
import { JsonRpcConnection, TOO_LONG, type RequestOptions } from './connection.js';
import { CLIENT_MAX_LINE_BYTES } from './framer.js';
import {
  PROTOCOL_VERSION,
  type ClientInfo,
  type DaemonStatus,
  type EmptyObject,
  type InitializeParams,
  type InitializeResult,
  type ListChangedParams,
  type RulesChangedParams,
  type ListRootsResult,
  type Method,
  type ParamsOf,
  type ReloadResult,
  type ResultOf,
} from './methods.js';
import { asyncLookups, blockingLookups, type SocketLookups } from './socket-lookups.js';
import { checkedResult } from './result-shapes.js';
import { readSocketPointer } from './socket-pointer.js';
import {
  checkSocketDir,
  checkSocketPathLength,
  resolveSocketPath,
  SOCKET_ENV,
} from './socket-path.js';

/** How long the client waits to connect and for each answer unless told otherwise. */
export const DEFAULT_CLIENT_TIMEOUT_MS = 10_000;

const START_HINT = startSentence({ daemon: 'mcp-rootsd', rootsctl: 'rootsctl', systemd: true });

/** Options for `RootsClient.connect`. */
export interface ConnectOptions {
  /** `--socket PATH`; else the environment decides (docs/protocol.md's order). */
  socket?: string | undefined;
  /** The environment to resolve the socket from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Where to look for the daemon's pointer when no socket is there (default: the state directory). */
  stateDir?: string;
  /** The user whose daemon to reach (default `process.getuid()`). */
  uid?: number;
  /** Sent in `initialize`; shown by `rootsctl status`. */
  clientInfo?: ClientInfo;
  /** Limit for connecting and for each answer, in ms (default 10 s; `Infinity` for answers: none). */
  timeoutMs?: number;
  /**
   * What an unreachable-daemon error tells the person to run (default: the systemd socket unit,
   * or `mcp-rootsd`); rootsctl and the proxy name the commands the way the person can run them. A
   * function is called only when the error is made (finding those commands costs file lookups).
   */
  startHint?: string | (() => string);
  /**
   * How the socket directory and the daemon's pointer are looked up before connecting:
   * `'async'` (the default) through libuv's thread pool, for a long-lived process whose event loop
   * must not wait on a slow mount; `'blocking'` for a command that connects, asks and exits with
   * nothing else to do meanwhile (rootsctl). The same checks either way (socket-lookups.ts).
   */
  lookups?: 'async' | 'blocking';
}

/** A grant's lifetime (`seconds` or RFC 3339 `expires`, default one hour), mode and name. */
export type GrantOptions = { readOnly?: boolean; name?: string } & (
  { seconds?: number; expires?: never } | { expires?: string; seconds?: never }
);

/** Events of `RootsClient`: a subscribed server's new list, and the end of the connection. */
export interface ClientEvents {
  list_changed: [params: ListChangedParams];
  rules_changed: [params: RulesChangedParams];
  close: [reason: string];
}

function unreachable(err: unknown, socketPath: string, hintOf: () => string): RootsError {
  const startHint = hintOf();
  const code = errnoCode(err) ?? 'EUNKNOWN';
  const what = `connect ${code} ${socketPath}`;
  if (code === 'ENOENT' || code === 'ECONNREFUSED' || code === 'ENOTDIR') {
    return new RootsError(
      'DAEMON_UNREACHABLE',
      `mcp-rootsd is not running (${what}). ${startHint}`,
      {
        hint: startHint,
        cause: err,
      },
    );
  }
  if (code === 'EACCES' || code === 'EPERM') {
    return new RootsError(
      'DAEMON_UNREACHABLE',
      `cannot connect to mcp-rootsd (${what}): permission denied; the socket must belong to you. Check its owner and mode, or choose another --socket.`,
      { cause: err },
    );
  }
  return new RootsError('DAEMON_UNREACHABLE', `cannot connect to mcp-rootsd (${what}).`, {
    hint: startHint,
    cause: err,
  });
}

function connectSocket(
  socketPath: string,
  timeoutMs: number,
  startHint: () => string,
): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ path: socketPath });
    // setTimeout would fire at once for Infinity.
    const limit = Number.isFinite(timeoutMs) ? timeoutMs : 2 ** 31 - 1;
    const timer = setTimeout(() => {
      socket.destroy();
      reject(
        new RootsError(
          'DAEMON_UNREACHABLE',
          `mcp-rootsd did not accept a connection on ${socketPath} within ${timeoutMs} ms. Check that it is running and not stuck.`,
        ),
      );
    }, limit);
    const onError = (err: Error): void => {
      clearTimeout(timer);
      reject(unreachable(err, socketPath, startHint));
    };
    socket.once('error', onError);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.off('error', onError);
      resolve(socket);
    });
  });
}

/** Connect to the daemon on `socketPath` after checking, so that nobody else can answer in its place. */
async function dial(
  socketPath: string,
  uid: number,
  timeoutMs: number,
  startHint: () => string,
  lookups: SocketLookups,
): Promise<Socket> {
  checkSocketPathLength(socketPath);
  await checkSocketDir(dirname(socketPath), uid, lookups);
  return connectSocket(socketPath, timeoutMs, startHint);
}

/** Whether `err` says that no daemon listens there (as opposed to one that is unsafe or stuck). */
function notRunning(err: unknown): boolean {
  if (!(err instanceof RootsError) || err.code !== 'DAEMON_UNREACHABLE') return false;
  return ['ENOENT', 'ECONNREFUSED', 'ENOTDIR'].includes(errnoCode(err.cause) ?? '');
}

/** A connection to mcp-rootsd; every method sends one request and returns its exact `result`. */
export class RootsClient extends EventEmitter<ClientEvents> {
  /** The socket this client is connected to. */
  readonly socketPath: string;
  /** What the daemon answered to `initialize`. */
  readonly daemon: InitializeResult;
  private readonly connection: JsonRpcConnection;
  private readonly timeoutMs: number;

  private constructor(
    connection: JsonRpcConnection,
    socketPath: string,
    daemon: InitializeResult,
    timeoutMs: number,
  ) {
    super();
    this.connection = connection;
    this.socketPath = socketPath;
    this.daemon = daemon;
    this.timeoutMs = timeoutMs;
    connection.onNotification('notifications/roots/list_changed', (params) =>
      this.emit('list_changed', params),
    );
    connection.onNotification('notifications/policy/rules_changed', (params) =>
      this.emit('rules_changed', params),
    );
    connection.once('close', (reason) => this.emit('close', reason));
  }

  /**
   * Find the socket (docs/protocol.md's order; then the daemon's pointer), check its directory, connect
   * and `initialize`.
   */
  static async connect(options: ConnectOptions = {}): Promise<RootsClient> {
    const uid = options.uid ?? process.getuid?.();
    if (uid === undefined) throw new RootsError('USAGE', 'mcp-roots needs a POSIX user id (Linux)');
    const timeoutMs = options.timeoutMs ?? DEFAULT_CLIENT_TIMEOUT_MS;
    const env = options.env ?? process.env;
    const given = options.startHint ?? START_HINT;
    const startHint = typeof given === 'function' ? given : () => given;
    const lookups = options.lookups === 'blocking' ? blockingLookups : asyncLookups;
    let socketPath = resolveSocketPath({ socket: options.socket, env, uid });
    let socket: Socket;
    try {
      socket = await dial(socketPath, uid, timeoutMs, startHint, lookups);
    } catch (err) {
      // Nobody where this environment says: the daemon may have been started in another one (a
      // host that drops XDG_RUNTIME_DIR), and its pointer says where. A socket named is final.
      if (options.socket || env[SOCKET_ENV] || !notRunning(err)) throw err;
      const dir = options.stateDir ?? stateDir(env, process.cwd());
      const pointed = await readSocketPointer(dir, uid, lookups);
      if (pointed === undefined || pointed === socketPath) throw err;
      try {
        socket = await dial(pointed, uid, timeoutMs, startHint, lookups);
      } catch (again) {
        // A pointer left by a daemon that was killed: what the person needs is the first error.
        throw notRunning(again) ? err : again;
      }
      socketPath = pointed;
    }
    const connection = new JsonRpcConnection(socket, socket, {
      maxLineBytes: CLIENT_MAX_LINE_BYTES,
      // A big list's push is read by what changed since the last one (list-reuse.ts).
      reuseLists: true,
      closedError: (method, reason) =>
        // This end gave up on an answer longer than it reads: the daemon is there.
        reason.startsWith(TOO_LONG)
          ? new RootsError(
              'PROTOCOL',
              `mcp-rootsd's answer to ${method} on ${socketPath} was longer than this client reads (${reason}); the daemon is running`,
            )
          : new RootsError(
              'DAEMON_UNREACHABLE',
              `mcp-rootsd closed the connection on ${socketPath} before answering ${method} (${reason}).`,
              { hint: startHint() },
            ),
    });
    const params: InitializeParams = { protocolVersion: PROTOCOL_VERSION };
    if (options.clientInfo !== undefined) params.clientInfo = options.clientInfo;
    let daemon: InitializeResult;
    try {
      daemon = await connection.request('initialize', params, { timeoutMs });
    } catch (err) {
      await connection.close();
      throw err;
    }
    if (daemon.protocolVersion !== PROTOCOL_VERSION) {
      await connection.close();
      throw new RootsError(
        'PROTOCOL',
        `mcp-rootsd on ${socketPath} speaks ${String(daemon.protocolVersion)}, this client speaks ${PROTOCOL_VERSION}. Use the same mcp-roots version for both.`,
      );
    }
    return new RootsClient(connection, socketPath, daemon, timeoutMs);
  }

  /** Whether the connection is closing or closed. */
  get closed(): boolean {
    return this.connection.closed;
  }

  /** Send any request; the client's timeout applies unless `options.timeoutMs` says otherwise (`Infinity`: none). */
  request<M extends Method>(
    method: M,
    params: ParamsOf<M>,
    options: RequestOptions = {},
  ): Promise<ResultOf<M>> {
    return this.connection
      .request(method, params, { timeoutMs: options.timeoutMs ?? this.timeoutMs })
      .then((result) => checkedResult(method, result, this.socketPath));
  }

  /** `roots/list`: the server's roots; `subscribe: true` also subscribes in the same step. */
  listRoots(server: string, options: { subscribe?: boolean } = {}): Promise<ListRootsResult> {
    const { subscribe } = options;
    return this.request('roots/list', subscribe === undefined ? { server } : { server, subscribe });
  }

  /** `roots/subscribe`: receive `list_changed` for `server`. */
  subscribe(server: string): Promise<{ revision: number }> {
    return this.request('roots/subscribe', { server });
  }

  /** `roots/unsubscribe`. */
  unsubscribe(server: string): Promise<EmptyObject> {
    return this.request('roots/unsubscribe', { server });
  }

  /** `roots/check`: may `server` access `path` (default read)? `context` goes to the decision log. */
  check(
    server: string,
    path: string,
    access?: Access,
    context: { tool?: string; client?: string; record?: boolean } = {},
  ): Promise<CheckResult> {
    return this.request('roots/check', {
      server,
      path,
      ...(access !== undefined ? { access } : {}),
      ...(context.tool !== undefined ? { tool: context.tool } : {}),
      ...(context.client !== undefined ? { client: context.client } : {}),
      ...(context.record !== undefined ? { record: context.record } : {}),
    });
  }

  /**
   * `policy/explain`: every rule that applies to `server` and what it yielded; with `writers`,
   * what the policy lets other servers write too.
   */
  explain(server: string, opts: { writers?: boolean } = {}): Promise<ExplainResult> {
    return this.request('policy/explain', opts.writers ? { server, writers: true } : { server });
  }

  /** `daemon/status`. */
  status(): Promise<DaemonStatus> {
    return this.request('daemon/status', {});
  }

  /** `policy/reload`: an invalid policy is `ok: false`, not an error. */
  reload(): Promise<ReloadResult> {
    return this.request('policy/reload', {});
  }

  /** `grants/add`: let `server` see `path` for a while (default one hour). */
  grant(server: string, path: string, options: GrantOptions = {}): Promise<ResultOf<'grants/add'>> {
    const params = { server, path, ...options };
    return this.request('grants/add', params);
  }

  /** `log/ask`: record in the decision log an ask put to the person and its answer. */
  logAsk(params: ParamsOf<'log/ask'>): Promise<EmptyObject> {
    return this.request('log/ask', params);
  }

  /** Record a path the proxy refused by itself, for its form (an addition). */
  logRefused(params: ParamsOf<'log/refused'>): Promise<EmptyObject> {
    return this.request('log/refused', params);
  }

  /** `grants/list`. */
  grants(): Promise<ResultOf<'grants/list'>> {
    return this.request('grants/list', {});
  }

  /** `grants/revoke`: one grant, or all of `server`'s without `path`. */
  revoke(server: string, path?: string): Promise<ResultOf<'grants/revoke'>> {
    return this.request('grants/revoke', path === undefined ? { server } : { server, path });
  }

  /** `policy/lockdown`: while on, every list is empty and every check says no. */
  lockdown(on: boolean): Promise<ResultOf<'policy/lockdown'>> {
    return this.request('policy/lockdown', { on });
  }

  /** Close the connection; pending requests reject; the same promise every time. */
  close(): Promise<void> {
    return this.connection.close();
  }
}
