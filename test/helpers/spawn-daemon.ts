/** Run the built mcp-rootsd as a real child process. */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { bin } from './bin.js';
import { poll } from './poll.js';

export interface DaemonProcess {
  child: ChildProcess;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** Start `mcp-rootsd ARGS`; resolves once the socket exists (or the process exits). */
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
  await poll(() => done || (existsSync(opts.socket) && /listening on/.test(err)), 10_000);
  return { child, stderr: () => err, exited };
}
