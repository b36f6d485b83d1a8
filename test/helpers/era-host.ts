/** A host built on a real MCP SDK (the v2 client in either era, or the v1 client) in front of mcp-roots-proxy. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as V2Client } from '@modelcontextprotocol/client';
import { StdioClientTransport as V2Transport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as V1Transport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  ElicitRequestSchema,
  ListRootsRequestSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { proxyCommand } from './proxy.js';
import { repoPath } from './repo.js';
import { toolOutcome } from './tool-result.js';

/** server-filesystem 2.0.1, which serves 2026-07-28 beside the 2025 revisions. */
export const FS2_SERVER = repoPath('node_modules/server-filesystem-v2/dist/index.js');

/** The kinds of host the tests drive. */
export type HostKind = 'v2-auto' | 'v2-pin' | 'v1';
export const HOST_KINDS: HostKind[] = ['v2-auto', 'v2-pin', 'v1'];

/** The list-changed notifications a host records, in the order they come. */
const LIST_CHANGED = [
  ['notifications/tools/list_changed', ToolListChangedNotificationSchema],
  ['notifications/prompts/list_changed', PromptListChangedNotificationSchema],
  ['notifications/resources/list_changed', ResourceListChangedNotificationSchema],
] as const;

/** What every host answers for roots itself: everything, which must never reach a server. */
export const HOST_ROOT = 'file:///';

export interface EraHost {
  /** The protocol version a v2 host negotiated (undefined for the v1 host, which does not say). */
  version: string | undefined;
  stderr: () => string;
  /** How often the host's own roots handler ran (the proxy answers for it: 0). */
  hostRootsCalls: () => number;
  /** The SDK client itself, for what the other members do not cover. */
  client: V1Client | V2Client;
  /** The list-changed notifications the host got, in order: their method and params. */
  notices: () => { method: string; params: unknown }[];
  /** Call a tool; its text and whether it is an error (a thrown call rejects). */
  call(name: string, args?: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
}

/** Start `serverCommand` under the proxy for `server`, with a host of `kind` in front. */
export async function startEraHost(
  t: { teardown(fn: () => unknown): void },
  opts: { kind: HostKind; server: string; socket: string; serverCommand: string[] },
): Promise<EraHost> {
  const { command, args, env } = proxyCommand(
    ['--server', opts.server, '--socket', opts.socket, '--log-level', 'debug'],
    opts.serverCommand,
  );
  let err = '';
  let rootsCalls = 0;
  const hostRoots = () => {
    rootsCalls++;
    return { roots: [{ uri: HOST_ROOT, name: 'the host would give everything' }] };
  };
  const accept = () => ({ action: 'accept' as const, content: { ok: true } });
  // A busy machine starts the proxy slowly, twice in auto mode (the probe, then the session).
  const timeout = 120_000;
  let version: string | undefined;
  let callTool: (name: string, a: Record<string, unknown>) => Promise<unknown>;
  let close: () => Promise<void>;
  let client: V1Client | V2Client;
  const notices: { method: string; params: unknown }[] = [];
  if (opts.kind === 'v1') {
    const transport = new V1Transport({ command, args, env, stderr: 'pipe' });
    transport.stderr?.on('data', (c: Buffer) => (err += c.toString()));
    const v1 = new V1Client(
      { name: 'test-host', version: '0' },
      { capabilities: { roots: { listChanged: true }, elicitation: {} } },
    );
    v1.setRequestHandler(ListRootsRequestSchema, hostRoots);
    v1.setRequestHandler(ElicitRequestSchema, accept);
    for (const [method, schema] of LIST_CHANGED) {
      v1.setNotificationHandler(schema, (n) => void notices.push({ method, params: n.params }));
    }
    await v1.connect(transport, { timeout });
    callTool = (name, a) => v1.callTool({ name, arguments: a }, undefined, { timeout });
    close = () => v1.close();
    client = v1;
  } else {
    const transport = new V2Transport({ command, args, env, stderr: 'pipe' });
    transport.stderr?.on('data', (c: Buffer) => (err += c.toString()));
    const v2 = new V2Client(
      { name: 'test-host', version: '0' },
      {
        capabilities: { roots: { listChanged: true }, elicitation: {} },
        versionNegotiation: {
          mode: opts.kind === 'v2-auto' ? 'auto' : { pin: '2026-07-28' },
          probe: { timeoutMs: timeout },
        },
      },
    );
    v2.setRequestHandler('roots/list', hostRoots);
    v2.setRequestHandler('elicitation/create', accept);
    for (const [method] of LIST_CHANGED) {
      v2.setNotificationHandler(method, (n) => void notices.push({ method, params: n.params }));
    }
    await v2.connect(transport, { timeout });
    version = v2.getNegotiatedProtocolVersion();
    callTool = (name, a) => v2.callTool({ name, arguments: a }, { timeout });
    close = () => v2.close();
    client = v2;
  }
  t.teardown(async () => {
    await close();
    const keep = process.env.PROXY_TEST_STDERR;
    if (keep) writeFileSync(join(keep, `${opts.kind}-${process.pid}-${Date.now()}.log`), err);
  });
  return {
    version,
    client,
    notices: () => [...notices],
    stderr: () => err,
    hostRootsCalls: () => rootsCalls,
    async call(name, a = {}) {
      return toolOutcome((await callTool(name, a)) as object);
    },
  };
}
