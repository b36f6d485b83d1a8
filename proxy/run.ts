/** Start the server as a child, relay through `RootsProxy`, and end with the child's exit status. */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { errnoCode } from '../common/errors.js';
import { packageVersion } from '../common/package-info.js';
import { DaemonLink } from './daemon-link.js';
import { makeProxyLogger } from './log.js';
import type { ProxyOptions } from './options.js';
import { RootsProxy } from './proxy.js';

/** The proxy's streams and environment (the process's own unless a test says otherwise). */
export interface ProxyIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
}

/** How long the child may take to exit once its input is closed, before SIGTERM (then SIGKILL). */
const EXIT_GRACE_MS = 3000;

/** How long the child's output may stay open after it has exited. */
const EXIT_OUTPUT_GRACE_MS = 1000;

const FORWARDED_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** Run the proxy until the child exits; resolves with the status to exit with. */
export async function runProxy(options: ProxyOptions, io: ProxyIo): Promise<number> {
  const log = makeProxyLogger(options.server, options.logLevel, io.stderr);
  if (!options.enforce) {
    log.warn(
      'enforcement is off (--no-enforce): tool calls are not checked against the policy; the server sees only its roots, which MCP servers are free to ignore',
    );
  }
  const version = packageVersion();
  const link = new DaemonLink({
    server: options.server,
    socket: options.socket,
    env: io.env,
    clientInfo: { name: 'mcp-roots-proxy', version: `${version} (server ${options.server})` },
    log,
  });

  const child = spawn(options.command, options.args, {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: io.env,
  });
  const spawned = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', resolve);
  });
  if (spawned !== undefined) {
    const code = errnoCode(spawned);
    log.error(`cannot start ${options.command}: ${spawned.message}`);
    return code === 'ENOENT' ? 127 : 126;
  }
  child.on('error', (err) => log.error(`the server process: ${err.message}`));
  link.start();

  const proxy = new RootsProxy({
    server: options.server,
    enforce: options.enforce,
    link,
    log,
    hostIn: io.stdin,
    hostOut: io.stdout,
    serverIn: child.stdin,
    serverOut: child.stdout,
    ...(options.askWaitMs !== undefined ? { askWaitMs: options.askWaitMs } : {}),
  });

  let killTimer: NodeJS.Timeout | undefined;
  const stopChild = (): void => {
    if (killTimer !== undefined || child.exitCode !== null || child.signalCode !== null) return;
    child.stdin.end();
    killTimer = setTimeout(() => {
      log.warn(`the server did not exit within ${EXIT_GRACE_MS} ms; sending SIGTERM`);
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), EXIT_GRACE_MS);
      killTimer.unref();
    }, EXIT_GRACE_MS);
    killTimer.unref();
  };
  proxy.on('hostClosed', stopChild);
  proxy.on('serverClosed', stopChild);

  const forward = (signal: NodeJS.Signals): void => {
    log.debug(`passing ${signal} to the server`);
    child.kill(signal);
  };
  for (const s of FORWARDED_SIGNALS) process.on(s, forward);

  // 'close' comes after 'exit' and after the child's stdout has ended, so nothing is lost. But a
  // grandchild that inherited the child's stdout can hold it open for ever: after the exit, wait
  // a little for the output, then stop waiting, so that the host is never left hanging.
  const status = await new Promise<number>((resolve) => {
    let grace: NodeJS.Timeout | undefined;
    const done = (code: number | null, signal: NodeJS.Signals | null): void => {
      if (grace !== undefined) clearTimeout(grace);
      if (code !== null) resolve(code);
      else resolve(128 + (signal === null ? 0 : constants.signals[signal]));
    };
    child.once('close', done);
    child.once('exit', (code, signal) => {
      grace = setTimeout(() => {
        log.warn(
          'the server exited but its output is still open (a process it started?); closing it',
        );
        child.off('close', done);
        // The proxy answers what is still in flight when the output closes; then we are done.
        child.stdout.once('close', () => done(code, signal));
        child.stdout.destroy();
      }, EXIT_OUTPUT_GRACE_MS);
    });
  });
  for (const s of FORWARDED_SIGNALS) process.off(s, forward);
  if (killTimer !== undefined) clearTimeout(killTimer);
  log.debug(`the server exited with status ${status}`);
  await link.close();
  return status;
}
