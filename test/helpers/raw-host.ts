/**
 * A host written by hand in front of the built mcp-roots-proxy and any server: JSON-RPC lines out,
 * parsed lines in, so that a test chooses every id (reusing one, cancelling one) and answers the
 * proxy's own requests (an ask) exactly when it wants to.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { proxyCommand } from './proxy.js';
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
  const { command, args, env } = proxyCommand(
    [
      '--server',
      opts.server,
      '--socket',
      opts.socket,
      '--log-level',
      'debug',
      ...(opts.proxyArgs ?? []),
    ],
    opts.serverCommand,
  );
  const child = spawn(command, args, { env });
  opts.t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const got: HostMessage[] = [];
  const taken = new Set<HostMessage>();
  let err = '';
  let pending = Buffer.alloc(0);
  child.stdout.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    for (let nl = pending.indexOf(10); nl !== -1; nl = pending.indexOf(10)) {
      got.push(JSON.parse(pending.subarray(0, nl).toString()) as HostMessage);
      pending = pending.subarray(nl + 1);
    }
  });
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  return {
    child,
    send: (m) => child.stdin.write(`${typeof m === 'string' ? m : JSON.stringify(m)}\n`),
    messages: () => [...got],
    answers: (id) => got.filter((m) => isAnswer(m, id)),
    async answer(id, ms = WAIT_MS) {
      let found: HostMessage | undefined;
      await waitFor(
        () => (found = got.find((m) => isAnswer(m, id))) !== undefined,
        ms,
        `an answer to ${JSON.stringify(id)}\n${err.slice(-3000)}`,
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
        `a ${method} request\n${err.slice(-3000)}`,
      );
      taken.add(found!);
      return found!;
    },
    stderr: () => err,
    async logged(pattern, ms = WAIT_MS) {
      await waitFor(() => pattern.test(err), ms, `${pattern} on stderr\n${err.slice(-3000)}`);
    },
  };
}
