/** Shapes shared by the policy engine, the wire protocol and every client (docs/protocol.md). */

export type Access = 'read' | 'write';
export type DenyAccess = 'all' | 'write';

/** A deny inside a root: a literal path as a URI, or a glob pattern. */
export type DenyMeta =
  | {
      uri: string;
      access: DenyAccess;
      /**
       * The links on the way to the path as written (`~/.bashrc` a link to a dotfiles copy, or
       * `~/.config` one), where they differ from `uri`: whatever reads the path follows them by
       * name, and a sandbox must not let a server replace one (proxy/sandbox-mounts.ts).
       */
      links?: string[];
    }
  | { pattern: string; access: DenyAccess };

export interface RootMeta {
  'mcp-roots/readOnly': boolean;
  /**
   * When a writable root turns read-only, where that is before it expires: it is writable only
   * through entries that end sooner (a write grant of a path a read-only entry names too).
   */
  'mcp-roots/writableUntil'?: string;
  'mcp-roots/expiresAt'?: string;
  'mcp-roots/deny'?: DenyMeta[];
  /**
   * Include patterns (canonical absolute globs or paths) whose matches could lie in this root: a
   * sandbox must not let the server create or change anything they could match.
   */
  'mcp-roots/include'?: string[];
  [key: string]: unknown;
}

/** An MCP Root with the policy's facts in `_meta`. */
export interface Root {
  uri: string;
  name?: string;
  _meta: RootMeta;
}

/** A problem in a policy file, with its position (1-based line and column). */
export interface PolicyError {
  file: string;
  line: number;
  column: number;
  message: string;
}

/**
 * Why `roots/check` refused, for programs: `outside` (no root of the server holds the path, the
 * one refusal a person may be asked to lift), `denied` (a deny or protected path, or a write that
 * would carry one), `read-only` (a write in a read-only root), `lockdown`, `invalid` (the path).
 */
export type RefusalKind = 'outside' | 'denied' | 'read-only' | 'lockdown' | 'invalid';

export interface CheckResult {
  allowed: boolean;
  access: Access;
  reason: string;
  /** Set when `allowed` is false. */
  refusal?: RefusalKind;
  /**
   * The canonical path decided on (links resolved; for a missing path, its nearest existing
   * directory's): what a grant must name to lift the refusal, whatever the path's spelling.
   * Absent for a path refused before it was resolved, and from daemons before this field.
   */
  canonical?: string;
  root?: Root;
}

/** The policy's `ask:` for one server: whether the proxy may ask the person to widen its roots. */
export interface AskRule {
  /** Ask about a path outside every root. */
  outside: boolean;
  /** Ask also about writing in a read-only root. */
  write: boolean;
}

export type ExplainReason =
  'missing' | 'expired' | 'denied' | 'not-readable' | 'outside-base' | 'symlink-refused';

export interface ExplainRule {
  file: string;
  line: number;
  column: number;
  kind: 'root' | 'deny' | 'protected';
  path: string;
  yielded: string[];
  reason?: ExplainReason;
}

/** How a policy covers a server name (`policy/explain`'s `coveredBy`). */
export type ServerCoverage = 'name' | 'pattern' | 'catch-all';

export interface ExplainResult {
  server: string;
  /**
   * Whether some block of the policy or a grant names the server, even with no roots (`roots: []`):
   * a name none names is most likely a typo. Absent from daemons that predate it.
   */
  declared?: boolean;
  /**
   * How the policy covers the server: `name` (a block or a grant with its own name), `pattern`
   * (only patterns, one narrower than `'*'`), `catch-all` (only `'*'`, which covers a typo too).
   * Absent when nothing covers it, and from daemons that predate it.
   */
  coveredBy?: ServerCoverage;
  roots: Root[];
  rules: ExplainRule[];
  /** The policy's `servers.<name>.tools` rules that apply to this server, by tool name. */
  tools?: Record<string, ToolRule>;
  /** The policy's `servers.<name>.launch` for this server (the last matching block's). */
  launch?: LaunchRule;
  /** The policy's `servers.<name>.sandbox` for this server, when any matching block asks for one. */
  sandbox?: SandboxRule;
  /** The policy's `ask:` for this server (absent from daemons that predate it: never ask). */
  ask?: AskRule;
  /** Asked for (`writers: true`): what the policy lets other servers write (`Writer`). */
  writers?: Writer[];
  /**
   * Every deny and protected path of the server's (as `_meta['mcp-roots/deny']` entries,
   * unfiltered): a sandbox hides what they match in the server's program directories (its
   * package, a Node's modules), as in a read-only root (an addition).
   */
  deny?: DenyMeta[];
}

/**
 * A path another entry of the policy may write: a writable root (a grant's too) or a
 * `sandbox.write` path of a block that names, or may match, a server other than the one asked
 * about. A sandboxed server's program must not lie there: another server could change the code
 * it runs (proxy/program-writers.ts).
 */
export interface Writer {
  /** Canonical for a root; as the policy expands it for a `sandbox.write` path. */
  path: string;
  /** The block's server name or pattern (`'*'` for every server). */
  by: string;
  /** The policy file and line of the block. */
  file: string;
  line: number;
}

/** How the proxy starts a server (`servers.<name>.launch`), placeholders not yet expanded. */
export interface LaunchRule {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
}

/**
 * `servers.<name>.sandbox`: extra paths, absolute, whether the server keeps the network, and
 * whether it may make Unix sockets.
 */
export interface SandboxRule {
  read: string[];
  write: string[];
  network: boolean;
  /**
   * Unix domain sockets made with `socket()` are refused in the sandbox unless this is true
   * (common/seccomp-filter.ts says why); absent: false (an addition).
   */
  unixSockets?: boolean;
  /**
   * With `write` paths: the policy's include patterns (canonical absolute globs or paths). A
   * `write` path is writable as a root is, so the sandbox must not let the server create or change
   * anything they could match there, as for a root's `_meta['mcp-roots/include']` (an addition).
   */
  include?: string[];
  /**
   * With `read` or `write` paths: every deny and protected path of the server's (as
   * `_meta['mcp-roots/deny']` entries, unfiltered): the sandbox hides what they match in a `read`
   * path, and hides or holds it in a `write` path, as in a root (an addition).
   */
  deny?: DenyMeta[];
}

/**
 * `rule`'s confinement (its network, its Unix sockets) without its `read` and `write` paths: what a server keeps
 * when the policy gives it nothing (lockdown, its block removed), as it then keeps no roots.
 */
export function confinementOnly(rule: SandboxRule): SandboxRule {
  return { ...rule, read: [], write: [] };
}

/** A tool override from `servers.<name>.tools.<tool>`. */
export interface ToolRule {
  paths?: string[];
  readOnly?: boolean;
}

export interface Grant {
  server: string;
  path: string;
  uri: string;
  readOnly: boolean;
  expires: string;
  name?: string;
}

/** Format a policy error as `file:line:col: message`. */
export function formatPolicyError(e: PolicyError): string {
  return `${e.file}:${e.line}:${e.column}: ${e.message}`;
}
