/** The proxy driven line by line, as a host would write raw JSON-RPC, in front of a fixture server that logs every line it receives. */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnLineChild } from './child-lines.js';
import { startDaemon, type TestDaemon } from './daemon.js';
import { ownedShortDir, proxyFor, waitFor } from './proxy.js';

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

export interface RawSessionOptions {
  /** The test that owns the session: its end kills a proxy a failed step left running. */
  t: { teardown(fn: () => unknown): void };
  dir: string;
  socket: string;
  server: string;
  fixture: string;
  proxyArgs?: string[];
  /** Arguments after the fixture's log file (`{roots}`, say). */
  serverArgs?: string[];
}

/** Start the proxy as `--server server` (plus `proxyArgs`) in front of `fixture`, logging into `dir`. */
export function startRawSession(opts: RawSessionOptions): RawSession {
  const log = join(opts.dir, `received-${Date.now()}-${Math.random()}.log`);
  writeFileSync(log, '');
  const { command, args, env } = proxyFor(
    { server: opts.server, socket: opts.socket, extra: opts.proxyArgs ?? [] },
    [process.execPath, opts.fixture, log, ...(opts.serverArgs ?? [])],
  );
  const { child, lines, stderr, send, exit } = spawnLineChild(opts.t, { command, args, env });
  return {
    child,
    hostLines: lines,
    stderr,
    send,
    received: () => readFileSync(log, 'utf8').split('\n').filter(Boolean),
    async line(needle, ms = STARTUP_MS) {
      let found: string | undefined;
      await waitFor(
        () => (found = lines().find((l) => l.includes(needle))) !== undefined,
        ms,
        `a line with ${needle}\n${stderr()}`,
      );
      return found!;
    },
    exit,
  };
}

/** A session whose server has one root, `<w>/in`, and a forbidden file outside it, initialized. */
export interface FixtureSession {
  s: RawSession;
  daemon: TestDaemon;
  /** The workspace: `in/` (the root), `out/o.txt` (outside every root, holding `mark`). */
  w: string;
}

/** What `startFixtureSession` sets up beyond its defaults. */
export interface FixtureSessionOptions {
  server: string;
  fixture: string;
  /** The text of `out/o.txt`, the file outside every root. */
  mark?: string;
  /** Files to write into the workspace (paths relative to it) before the daemon starts. */
  files?: Record<string, string>;
  /** Anything else to lay out in the workspace `w` before the daemon starts. */
  prepare?: (w: string) => void;
  /** More of the server's policy entry after its root, as YAML lines indented 4 spaces. */
  policy?: string;
  /** Arguments after the fixture's log file (`{roots}`, say). */
  serverArgs?: string[];
  /** What the host line answering `initialize` contains (default `"id":0`). */
  answered?: string;
}

/**
 * A daemon whose policy gives `server` the one root `<w>/in`, the proxy in front of `fixture`
 * for it, and the MCP handshake done as a 2025-03-26 host that declares roots.
 */
export async function startFixtureSession(
  t: { teardown(fn: () => unknown): void },
  opts: FixtureSessionOptions,
): Promise<FixtureSession> {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'in'), { recursive: true });
  mkdirSync(join(w, 'out'));
  writeFileSync(join(w, 'out/o.txt'), opts.mark ?? '');
  for (const [rel, text] of Object.entries(opts.files ?? {})) writeFileSync(join(w, rel), text);
  opts.prepare?.(w);
  const daemon = await startDaemon(
    t,
    `version: 1\nservers:\n  ${opts.server}:\n    roots:\n      - path: ${w}/in\n${opts.policy ?? ''}`,
    { dir },
  );
  const s = startRawSession({
    t,
    dir: daemon.dir,
    socket: daemon.socket,
    server: opts.server,
    fixture: opts.fixture,
    serverArgs: opts.serverArgs,
  });
  await initialize(s, opts.answered);
  return { s, daemon, w };
}

/**
 * A 2025-era host's handshake with id 0, roots with listChanged: `initialize`, its answer (the
 * first host line containing `answered`), then `notifications/initialized`.
 */
export async function initialize(s: RawSession, answered = '"id":0', ms?: number): Promise<void> {
  s.send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: '2025-03-26',
      capabilities: { roots: { listChanged: true } },
      clientInfo: { name: 'host', version: '1' },
    },
  });
  await s.line(answered, ms);
  s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
}

let sends = 0;
/**
 * Have a `hostile-lines.mjs` server write `lines` (text or bytes, each sent exactly as given) to
 * the proxy; resolves once its call is answered, with the host lines that came meanwhile.
 */
export async function serverSends(
  s: RawSession,
  lines: (string | Buffer)[],
  ms = STARTUP_MS,
): Promise<string[]> {
  const id = `send-${++sends}`;
  const before = s.hostLines().length;
  s.send({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: {
      name: 'send_base64',
      arguments: { lines: lines.map((l) => Buffer.from(l).toString('base64')) },
    },
  });
  await s.line(`"id":"${id}"`, ms);
  return s.hostLines().slice(before);
}
