/** The typed method map of mcp-roots/1 (docs/protocol.md): every request, its params and its result. */
import type {
  Access,
  CheckResult,
  ExplainResult,
  Grant,
  PolicyError,
  Root,
} from '../common/types.js';

/** The protocol version this code speaks. */
export const PROTOCOL_VERSION = 'mcp-roots/1';

/** The daemon's name in `initialize`'s `serverInfo`. */
export const DAEMON_NAME = 'mcp-rootsd';

/** A program's name and version, as sent in `initialize`. */
export interface ClientInfo {
  name: string;
  version: string;
}

/** Params of `initialize`. */
export interface InitializeParams {
  protocolVersion: string;
  clientInfo?: ClientInfo;
}

/** Result of `initialize`. */
export interface InitializeResult {
  protocolVersion: string;
  serverInfo: { name: typeof DAEMON_NAME; version: string };
  capabilities: Record<string, unknown>;
}

/** Params naming one MCP server. */
export interface ServerParams {
  server: string;
}

/** Params of `policy/explain`. */
export interface ExplainParams extends ServerParams {
  /** Add `writers`: what other servers may write (the proxy asks, for a sandboxed server). */
  writers?: boolean;
}

/** Params of `roots/list`. */
export interface ListRootsParams extends ServerParams {
  subscribe?: boolean;
}

/** Result of `roots/list`: an MCP `ListRootsResult` with the daemon's revision and instance. */
export interface ListRootsResult {
  roots: Root[];
  _meta: { 'mcp-roots/revision': number; 'mcp-roots/instance': string };
}

/** Params of `roots/check`. */
export interface CheckParams extends ServerParams {
  path: string;
  access?: Access;
  /** The tool the check is for, and the host that called it: recorded in the decision log only. */
  tool?: string;
  client?: string;
  /**
   * `false`: not recorded in the decision log. For a check a program makes for itself about a
   * decision already recorded (the proxy's look, before it asks the person, at whether an answer
   * meanwhile allowed the call), which the log showed as a second refusal.
   */
  record?: boolean;
}

/** Result of `policy/reload`: an invalid policy is `ok: false`, not a JSON-RPC error. */
export interface ReloadResult {
  ok: boolean;
  revision: number;
  errors: PolicyError[];
  warnings: PolicyError[];
}

/** The answers a person can give an ask, as `log/ask` records them. */
export type AskAnswer = 'accept' | 'decline' | 'cancel' | 'timeout';

/** Params of `log/ask`: the proxy asked the person for access, and this was the answer. */
export interface LogAskParams extends ServerParams {
  path: string;
  access: Access;
  answer: AskAnswer;
  tool?: string;
  client?: string;
  /** What an accepted answer granted. */
  granted?: { path: string; readOnly: boolean; expiresAt: string };
}

/**
 * Params of `log/refused`: a tool call's path that mcp-roots-proxy refused by itself, for its
 * form alone (a relative path, a `..` segment, a NUL), before any `roots/check`.
 */
export interface LogRefusedParams extends ServerParams {
  /** The value as the call gave it, control characters escaped. */
  path: string;
  access: Access;
  reason: string;
  tool?: string;
  client?: string;
}

/** Params of `grants/add`: a lifetime in `seconds` or an RFC 3339 `expires`, not both (default one hour). */
export type GrantAddParams = {
  server: string;
  path: string;
  readOnly?: boolean;
  name?: string;
  /**
   * A grant a person accepted in a question (the proxy's ask): granted only as they were shown
   * it. The path must be canonical as given (a link on the way that changed since the question
   * is refused, not followed), and not `/`, the home directory or above it (common/too-wide.ts).
   */
  asked?: boolean;
} & ({ seconds?: number; expires?: never } | { expires?: string; seconds?: never });

/** Params of `grants/revoke`: without `path`, all of that server's grants. */
export interface GrantRevokeParams extends ServerParams {
  path?: string;
}

/** One server's line in `daemon/status`. */
export interface ServerStatus {
  name: string;
  roots: number;
  readOnly: number;
  nextExpiry?: string;
}

/** One connection's line in `daemon/status`. */
export interface ConnectionStatus {
  client: string;
  /** The first 20 servers it is subscribed to, by name. */
  subscriptions: string[];
  /** How many more it is subscribed to, when there are more. */
  more?: number;
}

/** Result of `daemon/status` (docs/protocol.md, "daemon/status"). */
export interface DaemonStatus {
  version: string;
  pid: number;
  uptimeSeconds: number;
  socket: string;
  policy: {
    /** The main policy file the daemon was started on (an addition; absent from older daemons). */
    main?: string;
    /** The grants file (an addition; absent from older daemons). */
    grants?: string;
    files: string[];
    revision: number;
    loadedAt: string;
    sha256: string;
    errors: PolicyError[];
    warnings: PolicyError[];
  };
  servers: ServerStatus[];
  clients: number;
  subscriptions: number;
  /** How many servers subscribed to but not named by the policy are not listed (past 200). */
  serversNotListed?: number;
  /** The first 200 connections. */
  connections: ConnectionStatus[];
  /** How many connections are not listed, when there are more. */
  connectionsNotListed?: number;
  lockdown: boolean;
  watches: {
    directories: number;
    /**
     * An addition: the directories above those, watched only for a rename on the way to them;
     * absent from a daemon that watches none.
     */
    above?: number;
    /** `"events"` while every path is watched by events. */
    mode: string;
    /** Paths that could not be watched by events and are rescanned instead. */
    degraded: string[];
  };
  /** The earliest future expiry of any entry; absent when nothing expires. */
  nextExpiry?: string;
  /** The decision log the daemon writes; absent when it keeps none (`--decision-log-bytes 0`). */
  decisionLog?: string;
  /**
   * An addition: why the state directory the daemon started on is not used now (removed,
   * replaced, or made unsafe), so that neither its grants nor the decision log are read or
   * written until a restart; absent while it is sound.
   */
  stateDirProblem?: string;
}

/** `{}`: the params of a method that takes none, or a result with nothing to say. */
export type EmptyObject = Record<string, never>;

/** Every request of mcp-roots/1: `Methods[M]['params']` and `Methods[M]['result']`. */
export interface Methods {
  initialize: { params: InitializeParams; result: InitializeResult };
  'roots/list': { params: ListRootsParams; result: ListRootsResult };
  'roots/subscribe': { params: ServerParams; result: { revision: number } };
  'roots/unsubscribe': { params: ServerParams; result: EmptyObject };
  'roots/check': { params: CheckParams; result: CheckResult };
  'policy/explain': { params: ExplainParams; result: ExplainResult };
  'policy/reload': { params: EmptyObject; result: ReloadResult };
  'daemon/status': { params: EmptyObject; result: DaemonStatus };
  'grants/add': { params: GrantAddParams; result: { grant: Grant; notice?: string } };
  'grants/list': { params: EmptyObject; result: { grants: Grant[] } };
  'grants/revoke': { params: GrantRevokeParams; result: { revoked: number } };
  /** `notice`: lockdown is on but could not be saved, so a restart would end it (an addition). */
  'policy/lockdown': { params: { on: boolean }; result: { lockdown: boolean; notice?: string } };
  'log/ask': { params: LogAskParams; result: EmptyObject };
  'log/refused': { params: LogRefusedParams; result: EmptyObject };
}

/** A request method name. */
export type Method = keyof Methods;

/** The params of request `M`. */
export type ParamsOf<M extends Method> = Methods[M]['params'];

/** The result of request `M`. */
export type ResultOf<M extends Method> = Methods[M]['result'];

/** Params of `notifications/roots/list_changed`: the whole new list of one server. */
export interface ListChangedParams {
  server: string;
  revision: number;
  instance: string;
  roots: Root[];
}

/**
 * Params of `notifications/policy/rules_changed`: the server's rules beyond its roots (`launch`,
 * `sandbox`, `tools`, `ask`) changed; `policy/explain` gives them.
 */
export interface RulesChangedParams {
  server: string;
}

/** Every notification of mcp-roots/1 (daemon to client), by method. */
export interface Notifications {
  'notifications/roots/list_changed': ListChangedParams;
  'notifications/policy/rules_changed': RulesChangedParams;
}

/** A notification method name. */
export type NotificationMethod = keyof Notifications;
