/**
 * A host written by hand in front of the built mcp-roots-proxy and any server: JSON-RPC lines out,
 * parsed lines in, so that a test chooses every id (reusing one, cancelling one) and answers the
 * proxy's own requests (an ask) exactly when it wants to.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { spawnLineChild } from './child-lines.js';
import { proxyFor } from './proxy.js';
import { waitFor } from './poll.js';

/** One JSON-RPC message the proxy wrote to the host. */
export type HostMessage = {
  id?: unknown;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

export interface RawHost {
  child: ChildProcessWithoutNullStreams;
  /** Write one message (an object as JSON, a string as it is). */
  send(message: object | string): void;
  /** Every message the proxy wrote to the host so far. */
  messages(): HostMessage[];
  /** Every answer (result or error) to host request `id` so far. */
  answers(id: string | number): HostMessage[];
  /** The first answer to host request `id`, waiting for it. */
  answer(id: string | number, ms?: number): Promise<HostMessage>;
  /** The next request the proxy sent the host with `method`, not yet returned by this. */
  request(method: string, ms?: number): Promise<HostMessage>;
  stderr(): string;
  /** Wait until the proxy's stderr matches. */
  logged(pattern: RegExp, ms?: number): Promise<void>;
}

/** How long a wait lasts at most: it ends as soon as the line comes; a loaded machine is slow. */
const WAIT_MS = 30_000;

const isAnswer = (m: HostMessage, id: string | number): boolean =>
  m.id === id && m.method === undefined && ('result' in m || 'error' in m);

/** Start the proxy as `--server server` (plus `proxyArgs`) in front of `serverCommand`. */
export function startRawHost(opts: {
  t: { teardown(fn: () => unknown): void };
  server: string;
  socket: string;
  serverCommand: string[];
  proxyArgs?: string[];
}): RawHost {
  const got: HostMessage[] = [];
  const taken = new Set<HostMessage>();
  const { child, stderr, send } = spawnLineChild(
    opts.t,
    proxyFor(
      { server: opts.server, socket: opts.socket, extra: opts.proxyArgs ?? [] },
      opts.serverCommand,
    ),
    (line) => got.push(JSON.parse(line) as HostMessage),
  );
  return {
    child,
    send,
    messages: () => [...got],
    answers: (id) => got.filter((m) => isAnswer(m, id)),
    async answer(id, ms = WAIT_MS) {
      let found: HostMessage | undefined;
      await waitFor(
        () => (found = got.find((m) => isAnswer(m, id))) !== undefined,
        ms,
        `an answer to ${JSON.stringify(id)}\n${stderr().slice(-3000)}`,
      );
      return found!;
    },
    async request(method, ms = WAIT_MS) {
      let found: HostMessage | undefined;
      await waitFor(
        () =>
          (found = got.find((m) => m.method === method && 'id' in m && !taken.has(m))) !==
          undefined,
        ms,
        `a ${method} request\n${stderr().slice(-3000)}`,
      );
      taken.add(found!);
      return found!;
    },
    stderr,
    async logged(pattern, ms = WAIT_MS) {
      await waitFor(
        () => pattern.test(stderr()),
        ms,
        `${pattern} on stderr\n${stderr().slice(-3000)}`,
      );
    },
  };
}

/** Open a 2025-era session on `host`: `initialize` (with `capabilities`), its answer, `initialized`. */
export async function openSession(host: RawHost, capabilities: object = {}): Promise<void> {
  host.send({
    jsonrpc: '2.0',
    id: 'init',
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities,
      clientInfo: { name: 'raw-host', version: '0' },
    },
  });
  await host.answer('init');
  host.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}
