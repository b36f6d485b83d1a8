/** Any stdio server under mcp-roots-proxy (from source), with an SDK v1 Client as a 2025-era host. */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Test } from 'tap';
import { proxyFor } from './proxy.js';
import { stdioWithStderr } from './stdio-host.js';
import { fixtureServer } from './repo.js';
import { toolOutcome } from './tool-result.js';

/** The hostile fixture server's entry. */
export const HOSTILE_SERVER = fixtureServer('hostile.mjs');

export interface Proxied {
  client: Client;
  stderr: () => string;
  /** How many notifications/tools/list_changed reached the host. */
  toolsChanged: () => number;
  /** Call a tool; its text and whether it is an error. */
  call(name: string, args?: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
}

export interface ProxiedOptions {
  server: string;
  socket: string;
  /** Options before `--` (after --server, --socket and --log-level debug). */
  proxyArgs?: string[];
  /** The server's command after `--`; undefined leaves `--` out (the policy's launch). */
  command?: string[];
  /** Variables to set in (or, with undefined, remove from) the proxy's environment. */
  env?: Record<string, string | undefined>;
}

/** The proxy's transport, not yet connected (for tests that expect the connection to fail). */
export function proxiedTransport(opts: ProxiedOptions): {
  transport: StdioClientTransport;
  stderr: () => string;
} {
  const base = proxyFor(
    { server: opts.server, socket: opts.socket, extra: opts.proxyArgs ?? [] },
    opts.command ?? [],
  );
  // proxyFor always writes `--`; without a command the policy's launch is wanted.
  const args = opts.command === undefined ? base.args.slice(0, -1) : base.args;
  const env = { ...base.env };
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  return stdioWithStderr({ command: base.command, args, env });
}

/** Start the proxy and connect a host to it; closed at the end of `t`. */
export async function startProxied(
  t: { teardown(fn: () => unknown): void },
  opts: ProxiedOptions,
): Promise<Proxied> {
  const { transport, stderr } = proxiedTransport(opts);
  const client = new Client({ name: 'test-host', version: '0' }, { capabilities: {} });
  let changed = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changed++;
  });
  t.teardown(() => client.close());
  await client.connect(transport);
  return {
    client,
    stderr,
    toolsChanged: () => changed,
    async call(name, args = {}) {
      const result = await client.callTool({ name, arguments: args }, undefined, {
        timeout: 20_000,
      });
      return toolOutcome(result);
    },
  };
}

/** A tool call of the hostile server's `attempt`: a system call of its own, and what it gave. */
export type Attempt = (
  action: string,
  ref: string,
  to?: string,
) => Promise<{ text: string; isError: boolean }>;

/**
 * The hostile fixture server for `server` under `--sandbox --no-enforce`: only the kernel stands
 * in the way of what it `attempt`s.
 */
export async function startBoxedHostile(
  t: { teardown(fn: () => unknown): void },
  socket: string,
  server = 'h',
  /** Its command (a copy of the hostile server elsewhere, another node), the proxy's variables. */
  from: { command?: string[]; env?: Record<string, string | undefined> } = {},
): Promise<{ boxed: Proxied; attempt: Attempt }> {
  const boxed = await startProxied(t, {
    server,
    socket,
    proxyArgs: ['--sandbox', '--no-enforce'],
    command: from.command ?? [process.execPath, HOSTILE_SERVER],
    ...(from.env === undefined ? {} : { env: from.env }),
  });
  return { boxed, attempt: (action, ref, to = '') => boxed.call('attempt', { action, ref, to }) };
}

/**
 * The hostile fixture server for `server` in the sandbox its policy gives it (under
 * `--no-enforce`, only the kernel stands in the way). `flags` go to the server (hostile.mjs),
 * `proxyArgs` to the proxy after `--no-enforce`.
 */
export function startHostile(
  t: { teardown(fn: () => unknown): void },
  socket: string,
  opts: { server?: string; flags?: string[]; proxyArgs?: string[] } = {},
): Promise<Proxied> {
  return startProxied(t, {
    server: opts.server ?? 'h',
    socket,
    proxyArgs: ['--no-enforce', ...(opts.proxyArgs ?? [])],
    command: [process.execPath, HOSTILE_SERVER, ...(opts.flags ?? [])],
  });
}

/**
 * Start the hostile server for `h` sandboxed (enforcement off) and expect its start refused: the
 * host's initialize fails with `why`, and the proxy's log says the same.
 */
export async function sandboxedStartRefused(
  t: Test,
  socket: string,
  why: RegExp,
  what: string,
): Promise<void> {
  const { transport, stderr } = proxiedTransport({
    server: 'h',
    socket,
    proxyArgs: ['--sandbox', '--no-enforce'],
    command: [process.execPath, HOSTILE_SERVER],
  });
  const client = new Client({ name: 'test-host', version: '0' });
  t.teardown(() => client.close());
  const err = await client.connect(transport).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  t.ok(err, `${what}: the host's initialize fails`);
  t.match(err?.message, why, `${what}: the host is told why and what to do`);
  t.match(stderr(), why, `${what}: the proxy's log says the same`);
}
