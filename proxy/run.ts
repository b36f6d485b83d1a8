/** Start the server (or its stand-in), relay through `RootsProxy`, and end with the right status. */
import { homedir } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { packageVersion } from '../common/package-info.js';
import { DaemonLink } from './daemon-link.js';
import { planLaunch, type LaunchPlan, type PlanInput } from './launch-plan.js';
import { makeProxyLogger, type ProxyLogger } from './log.js';
import type { ProxyOptions } from './options.js';
import { RootsProxy } from './proxy.js';
import { probeSandbox, type SandboxSupport } from './sandbox-probe.js';
import { startServerProcess, type ServerProcess } from './server-process.js';
import { startStandIn, type StandIn } from './stand-in.js';

/** The proxy's streams and environment (the process's own unless a test says otherwise). */
export interface ProxyIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
}

const FORWARDED_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** How long the proxy waits for the daemon before the first start, to learn launch and sandbox. */
const FIRST_ANSWER_MS = 3000;

/** Log why the server is not running, at the level the reason deserves. */
function logPlan(log: ProxyLogger, plan: LaunchPlan): void {
  if (plan.kind === 'refuse') log.error(`the server is not started: ${plan.reason}`);
  else if (plan.kind === 'wait') log.info(`the server is not started yet: ${plan.reason}`);
  else log.info(`starting the server${plan.sandboxed ? ' in its sandbox' : ''}`);
}

/** Run the proxy until the server exits on its own, or the host goes away. */
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
  link.start();
  let support: Promise<SandboxSupport> | undefined;
  const planInput = (): PlanInput => ({
    options,
    roots: link.roots,
    launch: link.launch,
    sandbox: link.sandbox,
    env: io.env,
    home: io.env.HOME ?? homedir(),
    cwd: process.cwd(),
    daemonSocket: link.socketPath,
    sandboxSupport: () => (support ??= probeSandbox(io.env)),
  });

  // The policy may ask for a sandbox or give the command: learn it before starting anything.
  await Promise.race([link.firstAttempt, new Promise((r) => setTimeout(r, FIRST_ANSWER_MS))]);
  const plan = await planLaunch(planInput());
  logPlan(log, plan);
  let child: ServerProcess | undefined;
  let standIn: StandIn | undefined;
  if (plan.kind === 'start') {
    const started = await startServerProcess(plan.spawn, log);
    if ('failed' in started) {
      await link.close();
      return started.failed;
    }
    child = started;
  } else {
    standIn = startStandIn(options.server, version, plan);
  }
  const server = child ?? standIn!;

  const proxy = new RootsProxy({
    server: options.server,
    enforce: options.enforce,
    link,
    log,
    hostIn: io.stdin,
    hostOut: io.stdout,
    serverIn: server.serverIn,
    serverOut: server.serverOut,
  });

  const stop = (): void => {
    if (child !== undefined) child.stop();
    else standIn?.close();
  };
  proxy.on('hostClosed', stop);
  proxy.on('serverClosed', stop);

  const forward = (signal: NodeJS.Signals): void => {
    log.debug(`passing ${signal} to the server`);
    if (child !== undefined) child.kill(signal);
    else standIn?.close();
  };
  for (const s of FORWARDED_SIGNALS) process.on(s, forward);

  const status =
    child !== undefined
      ? await child.status
      : await new Promise<number>((resolve) => server.serverOut.once('end', () => resolve(0)));
  for (const s of FORWARDED_SIGNALS) process.off(s, forward);
  log.debug(`the server exited with status ${status}`);
  await link.close();
  return status;
}
