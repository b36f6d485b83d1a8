/** Run the built mcp-rootsd as a real child process. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { bin } from './bin.js';
import { poll } from './poll.js';

export interface DaemonProcess {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

/**
 * How long a daemon may take to start listening. Only a ceiling for a wait on an event: on a
 * loaded machine a start-up has taken over 10 s, and returning before the socket answers made the
 * caller's first connect fail with ENOENT.
 */
const START_MS = 60_000;

/** Whether something accepts a connection on `socket` now. */
function answers(socket: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ path: socket });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/**
 * Start `mcp-rootsd ARGS`; resolves once the daemon accepts connections on the socket (or the
 * process exits). Readiness is the socket answering, not a log line: `--log-level warn` hides
 * the "listening on" line. Throws, with the daemon's output, when neither happens.
 */
export async function spawnDaemon(
  args: string[],
  opts: {
    socket: string;
    env?: Record<string, string | undefined>;
    t?: { teardown(fn: () => unknown): void };
  },
): Promise<DaemonProcess> {
  const child = spawn(process.execPath, [bin('daemon'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...opts.env },
  });
  let err = '';
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  child.stdout.on('data', (b: Buffer) => (err += b.toString()));
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  let done = false;
  void exited.then(() => (done = true));
  opts.t?.teardown(() => {
    if (!done) child.kill('SIGKILL');
  });
  const ready = await poll(
    async () =>
      done || /listening on/.test(err) || (existsSync(opts.socket) && (await answers(opts.socket))),
    START_MS,
  );
  if (!ready) {
    throw new Error(
      `mcp-rootsd did not listen on ${opts.socket} within ${START_MS} ms; its output: ${err}`,
    );
  }
  return { child, stderr: () => err, exited };
}
