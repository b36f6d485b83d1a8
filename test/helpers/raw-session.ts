/** The proxy driven line by line, as a host would write raw JSON-RPC, in front of a fixture server that logs every line it receives. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { proxyFor, waitFor } from './proxy.js';

/** A fixture server in `test/fixtures/servers/` by file name; each takes its log file as first argument. */
export function fixtureServer(name: string): string {
  return fileURLToPath(new URL(`../fixtures/servers/${name}`, import.meta.url));
}

/**
 * How long `line` waits by default. A wait ends as soon as the line arrives; the limit is long
 * because the first answer includes starting the proxy and its server on a busy machine.
 */
const STARTUP_MS = 30_000;

export interface RawSession {
  child: ChildProcessWithoutNullStreams;
  /** Every line the proxy wrote to the host so far. */
  hostLines: () => string[];
  stderr: () => string;
  /** Write one line to the proxy: a string as it is, an object as JSON. */
  send(line: string | object): void;
  /** Every line the server received so far, as it arrived. */
  received: () => string[];
  /** The first host line containing `needle`, waiting for it. */
  line(needle: string, ms?: number): Promise<string>;
  exit: Promise<number | null>;
}

/** Start the proxy as `--server server` (plus `proxyArgs`) in front of `fixture`, logging into `dir`. */
export function startRawSession(opts: {
  /** The test that owns the session: its end kills a proxy a failed step left running. */
  t: { teardown(fn: () => unknown): void };
  dir: string;
  socket: string;
  server: string;
  fixture: string;
  proxyArgs?: string[];
  /** Arguments after the fixture's log file (`{roots}`, say). */
  serverArgs?: string[];
}): RawSession {
  const log = join(opts.dir, `received-${Date.now()}-${Math.random()}.log`);
  writeFileSync(log, '');
  const { command, args, env } = proxyFor(
    { server: opts.server, socket: opts.socket, extra: opts.proxyArgs ?? [] },
    [process.execPath, opts.fixture, log, ...(opts.serverArgs ?? [])],
  );
  const child = spawn(command, args, { env });
  opts.t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const stdout: string[] = [];
  let err = '';
  let pending = Buffer.alloc(0);
  child.stdout.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    for (let nl = pending.indexOf(10); nl !== -1; nl = pending.indexOf(10)) {
      stdout.push(pending.subarray(0, nl).toString());
      pending = pending.subarray(nl + 1);
    }
  });
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    hostLines: () => [...stdout],
    stderr: () => err,
    send: (line) =>
      child.stdin.write((typeof line === 'string' ? line : JSON.stringify(line)) + '\n'),
    received: () => readFileSync(log, 'utf8').split('\n').filter(Boolean),
    async line(needle, ms = STARTUP_MS) {
      let found: string | undefined;
      await waitFor(
        () => (found = stdout.find((l) => l.includes(needle))) !== undefined,
        ms,
        `a line with ${needle}\n${err}`,
      );
      return found!;
    },
    exit,
  };
}
