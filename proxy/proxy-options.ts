/** What `RootsProxy` is given: its streams, its daemon link, and its time limits. */
import type { Readable, Writable } from 'node:stream';
import type { DaemonLink } from './daemon-link.js';
import type { ProxyLogger } from './log.js';

/** Options for `RootsProxy`. */
export interface RootsProxyOptions {
  server: string;
  enforce: boolean;
  /** `--allow-unknown-server`: a name the policy lacks only warns (default: fails every request). */
  allowUnknownServer?: boolean;
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
  /** How long a tool call waits for the proxy's own `tools/list` (default 30 s). */
  toolsWaitMs?: number;
  /** Limit for the proxy's own requests to the server (default 30 s). */
  requestTimeoutMs?: number;
  /** How long an ask waits for the person's answer (default 60 s). */
  askWaitMs?: number;
  /** How long a refused ask keeps the same question from being asked again (default 10 min). */
  askRememberMs?: number;
  /** The user's home directory, which no question offers (default: the process's). */
  home?: string;
  /**
   * Resolves once the server runs as the roots seen so far would start it (`Supervisor.settled`:
   * a restart they cause is done). By default nothing is waited for (a server no supervisor
   * restarts: the tests' in-process proxies).
   */
  restartsSettled?: () => Promise<void>;
  /**
   * Whether the server is given its roots on its command line (`{roots}` in its command), so a
   * 2026-07-28 server that never asks for them has them anyway. Default: no.
   */
  rootsOnCommandLine?: () => boolean;
}

/** Events of `RootsProxy`: either side has closed its output. */
export interface RootsProxyEvents {
  hostClosed: [];
  serverClosed: [];
}

/** The time limits `RootsProxy` uses when its options leave them out. */
export const PROXY_DEFAULTS = {
  rootsWaitMs: 3000,
  holdMs: 2000,
  // The first call of a session waits for the tools: a slow server (or a busy machine) must not
  // turn an allowed call into a refusal because the schemas came late.
  toolsWaitMs: 30_000,
  requestTimeoutMs: 30_000,
  askWaitMs: 60_000,
  askRememberMs: 600_000,
  allowUnknownServer: false,
  restartsSettled: (): Promise<void> => Promise.resolve(),
  rootsOnCommandLine: (): boolean => false,
} as const;
