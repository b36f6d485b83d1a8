/** `attachRoots`: give an MCP host built on the TypeScript SDK the policy's roots for one server. */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { packageVersion } from '../common/package-info.js';
import type { Root } from '../common/types.js';
import { DaemonLink } from './daemon-link.js';

/**
 * The part of a v2 SDK client (`@modelcontextprotocol/client`) that `attachRoots` uses. It is
 * described here rather than imported so that hosts on the v1 SDK need not install the v2 one.
 */
export interface V2RootsClient {
  registerCapabilities(capabilities: { roots: { listChanged: boolean } }): void;
  setRequestHandler(method: 'roots/list', handler: () => Promise<{ roots: Root[] }>): void;
  getNegotiatedProtocolVersion(): string | undefined;
  sendRootsListChanged(): Promise<void>;
  readonly transport?: unknown;
}

/** The first MCP revision without `notifications/roots/list_changed`. */
const NO_LIST_CHANGED_SINCE = '2026-07-28';

/** Whether `client` is a v2 SDK client (its handlers are registered by method name). */
function isV2(client: Client | V2RootsClient): client is V2RootsClient {
  return typeof (client as Partial<V2RootsClient>).getNegotiatedProtocolVersion === 'function';
}

/** Options for `attachRoots`. */
export interface AttachRootsOptions {
  /** The server's name in the policy (`servers.<name>`). */
  server: string;
  /** The daemon's socket; else `MCP_ROOTS_SOCKET` and the usual places (docs/protocol.md). */
  socket?: string;
  /** The environment to resolve the socket from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** How long a `roots/list` waits for an unreachable daemon before answering `[]` (default 3 s). */
  rootsWaitMs?: number;
}

/** What `attachRoots` returns: the current list, and `close()` to let go of the daemon. */
export interface AttachedRoots {
  /** The server's roots, or undefined while the daemon is unreachable (the server then gets `[]`). */
  readonly roots: Root[] | undefined;
  /** Stop following the daemon; the same promise every time. */
  close(): Promise<void>;
}

/**
 * Declare the roots capability on `client` (call before `client.connect`), answer its server's
 * `roots/list` from mcp-rootsd's list for `options.server`, and send `roots/list_changed` on every
 * change. Fails closed: while the daemon is unreachable the server is told its roots changed and
 * gets an empty list; the link reconnects with backoff.
 *
 * `client` is a v1 SDK `Client` (`@modelcontextprotocol/sdk`) or a v2 one
 * (`@modelcontextprotocol/client`). The v2 client answers a 2026-07-28 server's `roots/list`
 * input requests with the same handler; that revision has no change notice, so none is sent
 * once such a session is negotiated (the server asks again on its next request).
 */
export function attachRoots(
  client: Client | V2RootsClient,
  options: AttachRootsOptions,
): AttachedRoots {
  const { server } = options;
  client.registerCapabilities({ roots: { listChanged: true } });
  const link = new DaemonLink({
    server,
    socket: options.socket,
    env: options.env ?? process.env,
    clientInfo: {
      name: 'mcp-roots attachRoots',
      version: `${packageVersion()} (server ${server})`,
    },
  });
  const waitMs = options.rootsWaitMs ?? 3000;
  const answer = async (): Promise<{ roots: Root[] }> => {
    const roots = link.roots ?? (await link.whenKnown(waitMs)) ?? [];
    return { roots };
  };
  if (isV2(client)) client.setRequestHandler('roots/list', answer);
  else client.setRequestHandler(ListRootsRequestSchema, answer);
  const changed = (): void => {
    // Before connect there is nobody to tell: the server asks after initialization anyway.
    if (client.transport === undefined) return;
    if (isV2(client)) {
      const version = client.getNegotiatedProtocolVersion();
      if (version === undefined || version >= NO_LIST_CHANGED_SINCE) return;
    }
    client.sendRootsListChanged().catch(() => {});
  };
  link.on('roots', changed);
  link.on('lost', changed);
  link.start();
  return {
    get roots() {
      return link.roots;
    },
    close: () => link.close(),
  };
}
