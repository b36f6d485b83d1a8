/** One run of the server as a child process: start it, stop it (gently, then not), learn its status. */
import { spawn, type ChildProcess } from 'node:child_process';
import { constants } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { errnoCode } from '../common/errors.js';
import type { SpawnSpec } from './launch-plan.js';
import type { ProxyLogger } from './log.js';
import type { SandboxInit } from './sandbox-init.js';
import { openSandbox, SANDBOX_STDIO } from './sandbox-start.js';

/** How long the child may take to exit once asked, before the next, harder signal. */
export const EXIT_GRACE_MS = 3000;

/** How long the child's output may stay open after it has exited. */
const EXIT_OUTPUT_GRACE_MS = 1000;

/** A started server. */
export interface ServerProcess {
  pid: number | undefined;
  serverIn: Writable;
  serverOut: Readable;
  /** The exit status (128 + signal for a signal), once the child and its output are closed. */
  status: Promise<number>;
  /** Close its input; then SIGTERM, then SIGKILL, each after `graceMs`. Idempotent. */
  stop(graceMs?: number, closeInputFirst?: boolean): void;
  kill(signal: NodeJS.Signals): void;
}

/** A command that could not start: the status a shell would give, and why. */
export interface StartFailure {
  failed: number;
  reason: string;
  /**
   * A sandbox that did not come out as laid out (a mount moved, a path went away, while bwrap
   * mounted them): a new layout, from the paths as they are now, may start.
   */
  moved?: boolean;
}

/** How long a sandbox's processes may take to end once its init is killed. */
const SANDBOX_END_MS = 2000;

/** Start `spec`; resolves once it runs, or with the status for a command that cannot start. */
export async function startServerProcess(
  spec: SpawnSpec,
  log: ProxyLogger,
): Promise<ServerProcess | StartFailure> {
  let child: ChildProcess;
  try {
    child = spawn(spec.command, spec.args, {
      stdio: spec.sandbox === undefined ? ['pipe', 'pipe', 'inherit'] : [...SANDBOX_STDIO],
      env: spec.env,
      ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
    });
  } catch (err) {
    // Some failures are thrown, not emitted: E2BIG (a command line or environment longer than
    // the system takes: thousands of roots through {roots}), EINVAL. The host is told why, as
    // for a command that is missing, rather than left with no server and no answer.
    const code = errnoCode(err);
    const why =
      code === 'E2BIG'
        ? `its command line and environment are longer than the system allows (${spec.args.length} arguments; many roots through {roots}?)`
        : (err as Error).message;
    log.error(`cannot start ${spec.command}: ${why}`);
    return { failed: 126, reason: why };
  }
  const spawned = await new Promise<Error | undefined>((resolve) => {
    child.once('spawn', () => resolve(undefined));
    child.once('error', resolve);
  });
  if (spawned !== undefined) {
    log.error(`cannot start ${spec.command}: ${spawned.message}`);
    return { failed: errnoCode(spawned) === 'ENOENT' ? 127 : 126, reason: spawned.message };
  }
  child.on('error', (err) => log.error(`the server process: ${err.message}`));
  // A sandboxed server's stderr, as its own would have been (SANDBOX_STDIO says why a pipe). A
  // host that does not read it holds the server up, as it would have, not the proxy's memory.
  child.stderr?.pipe(process.stderr, { end: false });
  const serverIn = child.stdin!;
  const serverOut = child.stdout!;
  // Set once the sandbox has passed its gate: ending it ends every process in the sandbox.
  let init: SandboxInit | undefined;

  // 'close' comes after 'exit' and after the child's stdout has ended, so nothing is lost. But a
  // grandchild that inherited the child's stdout can hold it open for ever: after the exit, wait
  // a little for the output, then stop waiting, so that the host is never left hanging.
  const exitStatus = new Promise<number>((resolve) => {
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
        serverOut.once('close', () => done(code, signal));
        serverOut.destroy();
      }, EXIT_OUTPUT_GRACE_MS);
    });
  });

  // The outer bwrap's exit is not the sandbox's end: a server that kept its init alive (its
  // parent-death signal cleared) would keep every process and mount (sandbox-init.ts).
  const status = exitStatus.then(async (code) => {
    if (init !== undefined && !(await init.end(SANDBOX_END_MS))) {
      log.error(`the sandbox's init (pid ${init.pid}) did not end after SIGKILL`);
    }
    return code;
  });
  const killAll = (): void => {
    child.kill('SIGKILL');
    init?.kill();
  };
  if (spec.sandbox !== undefined) {
    const opened = await openSandbox(child, spec.sandbox);
    if ('problem' in opened) {
      killAll();
      log.error(`the sandbox was stopped before the server started: ${opened.problem}`);
      await status;
      return { failed: 126, reason: opened.problem, moved: opened.moved };
    }
    init = opened.init;
  }

  let killTimer: NodeJS.Timeout | undefined;
  const exited = (): boolean => child.exitCode !== null || child.signalCode !== null;
  void status.then(() => clearTimeout(killTimer));
  return {
    pid: child.pid,
    serverIn,
    serverOut,
    status,
    stop(graceMs = EXIT_GRACE_MS, closeInputFirst = true) {
      if (killTimer !== undefined || exited()) return;
      const term = (): void => {
        log.debug(`sending SIGTERM to the server (pid ${child.pid})`);
        child.kill('SIGTERM');
        killTimer = setTimeout(killAll, graceMs);
        killTimer.unref();
      };
      if (!closeInputFirst) return term();
      serverIn.end();
      killTimer = setTimeout(() => {
        log.warn(`the server did not exit within ${graceMs} ms; sending SIGTERM`);
        term();
      }, graceMs);
      killTimer.unref();
    },
    kill(signal) {
      if (signal === 'SIGKILL') killAll();
      else child.kill(signal);
    },
  };
}
