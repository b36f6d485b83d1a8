/** Start a real daemon on a socket in a short temp directory, in this process. */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { Daemon } from '../../daemon/daemon.js';
import { makeLogger } from '../../daemon/logger.js';
import type { DaemonOptions } from '../../daemon/options.js';
import type { WatchBackend } from '../../daemon/watch-backend.js';
import { RootsClient } from '../../protocol/client.js';
import { shortDir } from './short-dir.js';

export interface TestDaemon {
  daemon: Daemon;
  /** Short temp directory holding the socket, the state dir and (by default) the policy. */
  dir: string;
  socket: string;
  config: string;
  stateDir: string;
  /** Every log line so far. */
  logs: string[];
  connect(name?: string): Promise<RootsClient>;
  writePolicy(yaml: string): void;
  close(): Promise<void>;
}

/** A short directory for sockets (kept here for the tests that import it from this module). */
export { shortDir };

/** How many of its daemon's log lines a failed test prints. */
const LOG_TAIL = 80;

/** Start a daemon; `policy` is written to `<dir>/mcp-roots.yaml` first unless undefined. */
export async function startDaemon(
  t: { teardown(fn: () => unknown): void; passing?(): boolean },
  policy: string | undefined,
  overrides: Partial<DaemonOptions> & { dir?: string; watchBackend?: WatchBackend } = {},
): Promise<TestDaemon> {
  const dir = overrides.dir ?? shortDir();
  const socket = join(dir, 'run', 'rootsd.sock');
  const config = overrides.configFile ?? join(dir, 'mcp-roots.yaml');
  const stateDir = join(dir, 'state');
  if (policy !== undefined) writeFileSync(config, policy);
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      logs.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  const log = makeLogger({ level: 'debug', format: 'text', stream });
  const { watchBackend, ...optionOverrides } = overrides;
  const options: DaemonOptions = {
    configFile: config,
    socket,
    stateDir,
    home: join(dir, 'home'),
    logLevel: 'debug',
    logFormat: 'text',
    settleMs: 20,
    rescanMs: 300_000,
    degradedRescanMs: 200,
    decisionLogBytes: 1024 * 1024,
    ...optionOverrides,
  };
  const env = { ...process.env, HOME: options.home };
  const daemon = await Daemon.start(options, {
    log,
    env,
    uid: process.getuid!(),
    pid: process.pid,
    watchBackend,
  });
  const clients: RootsClient[] = [];
  const td: TestDaemon = {
    daemon,
    dir,
    socket,
    config,
    stateDir,
    logs,
    async connect(name = 'test') {
      // A generous ceiling on each answer: a loaded 2-core machine has taken over 10 s for a burst
      // of grants, each written with fsync; no test here is about the client's own timeout.
      const c = await RootsClient.connect({
        socket,
        env,
        clientInfo: { name, version: '0' },
        timeoutMs: 60_000,
      });
      clients.push(c);
      return c;
    },
    writePolicy(yaml) {
      writeFileSync(config, yaml);
    },
    async close() {
      await Promise.all(clients.map((c) => c.close()));
      await daemon.close();
    },
  };
  t.teardown(async () => {
    // A test that failed shows what its daemon did last: a failure seen once in many runs (a
    // loaded CI machine) can then be read from the run's log instead of guessed at.
    if (t.passing?.() === false) {
      const tail = logs.slice(-LOG_TAIL).map((l) => `# daemon: ${l}\n`);
      process.stderr.write(`# the daemon's last ${tail.length} log lines:\n${tail.join('')}`);
    }
    await td.close();
    if (!overrides.dir) rmSync(dir, { recursive: true, force: true });
  });
  return td;
}

/** Resolve with the next event, or reject after `ms`. */
export function nextEvent<T>(emitter: NodeJS.EventEmitter, event: string, ms = 30_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      emitter.off(event, on);
      reject(new Error(`no ${event} within ${ms} ms`));
    }, ms);
    const on = (value: T) => {
      clearTimeout(timer);
      resolve(value);
    };
    emitter.once(event, on);
  });
}

/**
 * A daemon whose server `fs` lists 3,000 directories with long names (`dir/many/*`): about
 * 300 KB a list, so that a few lists queued for a client that does not read pass the 1 MiB cap.
 */
export async function startLargeListDaemon(t: {
  teardown(fn: () => unknown): void;
}): Promise<{ dir: string; d: TestDaemon }> {
  const dir = shortDir();
  for (let i = 0; i < 3000; i++)
    mkdirSync(join(dir, 'many', `directory-with-a-long-name-${i}`), { recursive: true });
  const policy = `version: 1\nservers:\n  fs:\n    roots: [{path: ${dir}/many/*}]\n`;
  return { dir, d: await startDaemon(t, policy, { dir }) };
}
