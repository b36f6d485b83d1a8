/** Start the server (or its stand-in), relay through `RootsProxy`, and end with the right status. */
import { constants, homedir } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { packageVersion } from '../common/package-info.js';
import { DaemonLink } from './daemon-link.js';
import { hintCommands } from './hint-commands.js';
import type { PlanInput } from './launch-plan.js';
import { makeProxyLogger } from './log.js';
import type { ProxyOptions } from './options.js';
import { RootsProxy } from './proxy.js';
import { rootsAt } from './root-expiry.js';
import { probeSandbox, type SandboxSupport } from './sandbox-probe.js';
import { Supervisor } from './supervisor.js';

/** The proxy's streams and environment (the process's own unless a test says otherwise). */
export interface ProxyIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  env: NodeJS.ProcessEnv;
  /** Descriptors the proxy was started with and closed (inherited-fds.ts), said in the log. */
  closedFds?: readonly number[];
}

const FORWARDED_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** How long the proxy waits for the daemon before the first start, to learn launch and sandbox. */
const FIRST_ANSWER_MS = 3000;

/**
 * `MCP_ROOTS_PROXY_WATCH_DIRS`: how many directories of a sandboxed server's roots the proxy may
 * watch for new denied paths (each is an inotify watch, a limited resource; README, Sandboxing).
 */
function watchedDirs(env: NodeJS.ProcessEnv): number | undefined {
  const raw = env.MCP_ROOTS_PROXY_WATCH_DIRS;
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  return Number(raw);
}

/** Run the proxy until the server exits on its own, or the host goes away. */
export async function runProxy(options: ProxyOptions, io: ProxyIo): Promise<number> {
  const log = makeProxyLogger(options.server, options.logLevel, io.stderr);
  if (!options.enforce) {
    log.warn(
      'enforcement is off (--no-enforce): tool calls are not checked against the policy; the server sees only its roots, which MCP servers are free to ignore',
    );
  }
  if (io.closedFds !== undefined && io.closedFds.length > 0) {
    log.info(
      `closed descriptor${io.closedFds.length === 1 ? '' : 's'} ${io.closedFds.join(', ')}, left open by whatever started the proxy: the server gets only stdin, stdout and stderr`,
    );
  }
  const version = packageVersion();
  const commands = hintCommands(io.env, options.socket);
  const link = new DaemonLink({
    server: options.server,
    socket: options.socket,
    env: io.env,
    clientInfo: { name: 'mcp-roots-proxy', version: `${version} (server ${options.server})` },
    allowUnknownServer: options.allowUnknownServer,
    sandboxed: options.sandbox,
    commands,
    log,
  });
  link.start();
  let support: Promise<SandboxSupport> | undefined;
  const planInput = (): PlanInput => ({
    options,
    // Expired by the proxy's clock, a root is gone (or read-only) whether or not the daemon has
    // said so yet.
    roots: link.roots === undefined ? undefined : rootsAt(link.roots, Date.now()),
    launch: link.launch,
    sandbox: link.sandbox,
    writers: link.writers,
    deny: link.deny,
    env: io.env,
    home: io.env.HOME ?? homedir(),
    cwd: process.cwd(),
    daemonSocket: link.socketPath,
    sandboxSupport: () => (support ??= probeSandbox(io.env)),
    rootsctl: commands.rootsctl,
  });
  const supervisor = new Supervisor({
    server: options.server,
    version,
    log,
    planInput,
    maxWatchedDirs: watchedDirs(io.env),
  });
  link.on('roots', () => supervisor.onRoots());
  link.on('rules', () => supervisor.onRules());

  // The policy may ask for a sandbox or give the command: learn it before starting anything.
  await Promise.race([link.firstAttempt, new Promise((r) => setTimeout(r, FIRST_ANSWER_MS))]);
  const first = await supervisor.start();

  const proxy = new RootsProxy({
    server: options.server,
    enforce: options.enforce,
    allowUnknownServer: options.allowUnknownServer,
    link,
    log,
    hostIn: io.stdin,
    hostOut: io.stdout,
    serverIn: first.serverIn,
    serverOut: first.serverOut,
    home: io.env.HOME ?? homedir(),
    ...(options.askWaitMs !== undefined ? { askWaitMs: options.askWaitMs } : {}),
    restartsSettled: () => supervisor.settled(),
    rootsOnCommandLine: () => supervisor.rootsOnCommandLine,
  });
  supervisor.follow(proxy);

  // Whether the end was asked for (the host left, or a signal came): the status then says nothing.
  let asked = false;
  const forward = (signal: NodeJS.Signals): void => {
    asked = true;
    log.debug(`passing ${signal} to the server`);
    supervisor.signal(signal);
  };
  for (const s of FORWARDED_SIGNALS) process.on(s, forward);
  proxy.on('hostClosed', () => {
    asked = true;
    supervisor.stop();
  });

  // The session ends when the server that runs now closes its output (a replaced one does not).
  await new Promise<void>((resolve) => proxy.once('serverClosed', resolve));
  // Taken now: a host that leaves once told the server went away (an SDK closes its side when
  // `initialize` fails) did not end it, and the hint below is for that host's person.
  const onItsOwn = !asked;
  supervisor.stop();
  const status = (await supervisor.process?.status) ?? supervisor.firstFailed ?? 0;
  for (const s of FORWARDED_SIGNALS) process.off(s, forward);
  // A server that ended on its own with a failure: the host was told only that it went away.
  if (onItsOwn && status !== 0) {
    log.warn(`the server ${exitedWith(status)}${supervisor.isSandboxed ? SANDBOX_EXIT : ''}`);
  } else log.debug(`the server ${exitedWith(status)}`);
  await link.close();
  return status;
}

/**
 * What a sandboxed server that failed on its own most often lacked: a file the sandbox does not
 * show (a script's program elsewhere: "Cannot find module", "No such file") or a place to write
 * ("Read-only file system"). Its own words are above in the log; this says what to do with them.
 */
const SANDBOX_EXIT =
  '. It ran in the sandbox, which shows only the system, its roots, its own program and the ' +
  "policy's sandbox.read and sandbox.write paths: if its output above says a file or module is " +
  'missing, or a file system is read-only, add that path to sandbox.read (or sandbox.write, or ' +
  'keep its data in a writable root); README, "Sandboxing"';

/** How a status reads: a number, or the signal a status above 128 stands for. */
function exitedWith(status: number): string {
  const signal = Object.entries(constants.signals).find(([, n]) => n === status - 128)?.[0];
  return status > 128 && signal !== undefined
    ? `was ended by ${signal} (status ${status})`
    : `exited with status ${status}`;
}
