/**
 * A host on the v2 SDK client pinned to 2026-07-28, declaring form elicitation, in front of
 * mcp-roots-proxy: the person's answers come from the test, and a manual mode hands the test the
 * `input_required` results so that it can retry (or forge a retry) itself.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { proxyFor } from './proxy.js';
import { toolOutcome } from './tool-result.js';

/** The params of an `elicitation/create` as the host's handler gets them. */
export interface ElicitParams {
  message: string;
  mode?: string;
  requestedSchema?: { properties?: Record<string, unknown> };
}

/** The person's answer. */
export interface ElicitAnswer {
  action: 'accept' | 'decline' | 'cancel';
  content?: Record<string, unknown>;
}

export interface AskHost {
  client: Client;
  stderr: () => string;
  /** Call a tool; its text and whether it is an error (a JSON-RPC error rejects). */
  call(name: string, args: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
  /** Send `tools/call` with these params as they are and return the raw result (manual mode). */
  callRaw(params: Record<string, unknown>): Promise<Record<string, unknown>>;
}

const TIMEOUT_MS = 120_000;

/** Start `serverCommand` under the proxy for `server`, with a 2026-07-28 host in front. */
export async function startAskHost(
  t: { teardown(fn: () => unknown): void },
  opts: {
    server: string;
    socket: string;
    serverCommand: string[];
    /** The person: answers each question (the host's own dialog). */
    elicit: (params: ElicitParams) => Promise<ElicitAnswer>;
    /** Hand `input_required` results to the test instead of answering them. */
    manual?: boolean;
    proxyArgs?: string[];
  },
): Promise<AskHost> {
  const { command, args, env } = proxyFor(
    { server: opts.server, socket: opts.socket, extra: opts.proxyArgs ?? [] },
    opts.serverCommand,
  );
  const transport = new StdioClientTransport({ command, args, env, stderr: 'pipe' });
  let err = '';
  transport.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  const client = new Client(
    { name: 'ask-host', version: '0' },
    {
      capabilities: { roots: { listChanged: true }, elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: '2026-07-28' }, probe: { timeoutMs: TIMEOUT_MS } },
      ...(opts.manual === true ? { inputRequired: { autoFulfill: false } } : {}),
    },
  );
  client.setRequestHandler('roots/list', () => ({
    roots: [{ uri: 'file:///', name: 'the host would give everything' }],
  }));
  client.setRequestHandler('elicitation/create', async (req) => {
    const answer = await opts.elicit(req.params);
    return answer as { action: 'accept' };
  });
  await client.connect(transport, { timeout: TIMEOUT_MS });
  t.teardown(async () => {
    await client.close();
    const keep = process.env.PROXY_TEST_STDERR;
    if (keep) writeFileSync(join(keep, `ask-${opts.server}-${process.pid}-${Date.now()}.log`), err);
  });
  return {
    client,
    stderr: () => err,
    async call(name, a) {
      const result = await client.callTool({ name, arguments: a }, { timeout: TIMEOUT_MS });
      return toolOutcome(result);
    },
    async callRaw(params) {
      const result = await client.callTool(params as { name: string }, {
        timeout: TIMEOUT_MS,
        allowInputRequired: true,
      });
      return result;
    },
  };
}
