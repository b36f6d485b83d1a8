/** The doctor's lines about this machine and the daemon: Node, the socket directory, the daemon, systemd. */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { lstat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { RootsError } from '../../common/errors.js';
import { configHome, tildify, type Env } from '../../common/locations.js';
import type { DaemonStatus } from '../../protocol/methods.js';
import { checkSocketDir, resolveSocketPath } from '../../protocol/socket-path.js';
import { fail, ok, warn, type Check } from './check.js';

/** The oldest Node mcp-roots runs on (package.json "engines"). */
const NODE_MIN = [20, 19];
/** Node releases past their end of life: still run, but get no security fixes. */
const NODE_EOL_MAJOR = 20;

export function nodeCheck(version: string): Check {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  const fix = [
    "install Node 22 or 24 LTS (https://nodejs.org, or your distribution's nodejs package)",
  ];
  if (major < NODE_MIN[0]! || (major === NODE_MIN[0] && minor < NODE_MIN[1]!)) {
    return fail(
      'node',
      `Node ${version} is older than ${NODE_MIN.join('.')}, the oldest mcp-roots runs on`,
      fix,
    );
  }
  if (major <= NODE_EOL_MAJOR) {
    return warn(
      'node',
      `Node ${version} works, but Node ${major} is past its end of life (no security fixes)`,
      fix,
    );
  }
  return ok('node', `Node ${version}`);
}

/** The socket directory: ours, a directory, and not writable by others (or not there yet). */
export async function socketDirCheck(
  env: Env,
  uid: number,
  socket: string | undefined,
  cwd: string,
  home: string,
): Promise<{ check: Check; socketPath: string }> {
  const socketPath = resolveSocketPath({ socket, env, uid, cwd });
  const dir = dirname(socketPath);
  const st = await lstat(dir).catch(() => undefined);
  if (st === undefined) {
    return {
      socketPath,
      check: ok(
        'socket directory',
        `${tildify(dir, home)} does not exist yet; mcp-rootsd creates it (mode 0700)`,
      ),
    };
  }
  try {
    await checkSocketDir(dir, uid);
  } catch (err) {
    const message = err instanceof RootsError ? err.message : String(err);
    // A shared directory such as /tmp is never to be made private: the check's own fix says
    // what to do instead.
    const shared = (st.mode & 0o1000) !== 0 && err instanceof RootsError ? err.hint : undefined;
    return {
      socketPath,
      check: fail('socket directory', message, [
        shared ??
          (st.uid === uid
            ? `chmod 700 ${dir}`
            : `choose another socket (--socket or MCP_ROOTS_SOCKET); ${dir} belongs to uid ${st.uid}`),
      ]),
    };
  }
  const mode = (st.mode & 0o777).toString(8).padStart(4, '0');
  return {
    socketPath,
    check: ok('socket directory', `${tildify(dir, home)}: yours, mode ${mode}`),
  };
}

/** How the fixes name rootsctl and mcp-rootsd: as the person runs them (cli/hint.ts). */
export interface FixCommands {
  /** `rootsctl ARGS`; `daemon` adds the `--socket` the person gave. */
  ctl(args: string, daemon?: boolean): string;
  /** `rootsctl COMMAND` acting on the policy `file` (with `--config` unless it is the default). */
  onPolicy(command: string, file: string | undefined): string;
  /** `mcp-rootsd`, with that `--socket`, the `--config` doctor checked and the `--state-dir` given. */
  daemon: string;
  /** Whether the systemd socket unit is worth naming: it serves the default socket only. */
  systemd: boolean;
  /**
   * With a socket of one's own, the flags its daemon was started with that were not given here:
   * the daemon named above would serve the person's own policy or state in their place.
   */
  notGiven: string[];
}

/** What a fix that starts the daemon on a socket of one's own adds: the flags not known here. */
function startedWith(cmd: FixCommands): string {
  if (cmd.notGiven.length === 0) return '';
  return `, with the ${cmd.notGiven.join(' and ')} you run it with (the demo's: \`npm start\` in its repository)`;
}

/** The daemon's line from its status, or the reason it could not be asked. */
export function daemonCheck(
  status: DaemonStatus | RootsError,
  home: string,
  socketPath: string,
  cmd: FixCommands,
): Check {
  const run = `run ${cmd.daemon} in a terminal${startedWith(cmd)}`;
  const start = cmd.systemd
    ? [
        `systemctl --user start mcp-rootsd.socket   (after \`${cmd.ctl('install-service')}\`)`,
        `or ${run}`,
      ]
    : [run];
  if (status instanceof RootsError) {
    return fail(
      'daemon',
      `not reachable on ${tildify(socketPath, home)}: ${status.message.split('. ')[0]}`,
      start,
    );
  }
  // An addition: a daemon whose state directory was removed or replaced while it ran.
  if (typeof status.stateDirProblem === 'string') {
    return fail(
      'daemon',
      `mcp-rootsd ${status.version} (pid ${status.pid}) runs, but ${status.stateDirProblem}`,
      cmd.systemd
        ? [
            'systemctl --user restart mcp-rootsd   (where systemd runs it)',
            `or stop pid ${status.pid} and ${run}`,
          ]
        : [`stop pid ${status.pid} and ${run}`],
    );
  }
  const files = status.policy.files.map((f) => tildify(f, home)).join(', ');
  const n = status.policy.errors.length;
  if (n > 0) {
    return fail(
      'daemon',
      `mcp-rootsd ${status.version} (pid ${status.pid}) runs, but its policy has ${n} error${n === 1 ? '' : 's'}${files ? `; serving the last valid one (${files})` : '; no valid policy, so no roots'}`,
      [
        `${cmd.ctl('status', true)}   (shows the errors)`,
        `${cmd.onPolicy('edit', status.policy.main)}   (fix them; saves only a valid policy)`,
      ],
    );
  }
  return ok(
    'daemon',
    `mcp-rootsd ${status.version} (pid ${status.pid}) serves ${files || 'no policy file (no roots)'}, revision ${status.policy.revision}`,
  );
}

function systemctl(env: Env, args: string[]): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn('systemctl', ['--user', ...args], {
      env,
      stdio: 'ignore',
      timeout: 10_000,
    });
    child.once('error', () => resolve(127));
    child.once('close', (code) => resolve(code ?? 1));
  });
}

/** The systemd user manager: reachable, and mcp-roots' units installed. Not needed: mcp-rootsd also runs by hand. */
export async function systemdCheck(env: Env, home: string, cmd: FixCommands): Promise<Check> {
  const code = await systemctl(env, ['show-environment']);
  if (code !== 0) {
    return warn(
      'systemd user manager',
      code === 127
        ? 'systemctl is not installed'
        : 'not reachable from here (`systemctl --user` failed)',
      [
        'in a desktop or ssh login session it usually is; for a machine without logins: sudo loginctl enable-linger $USER',
        `or run ${cmd.daemon} by hand (in a terminal, or your own service manager)${startedWith(cmd)}`,
      ],
    );
  }
  const unit = join(configHome(env), 'systemd', 'user', 'mcp-rootsd.socket');
  if (!existsSync(unit)) {
    return warn(
      'systemd user manager',
      `reachable, but the units are not installed (${tildify(unit, home)})`,
      [cmd.ctl('install-service')],
    );
  }
  return ok(
    'systemd user manager',
    `reachable; units installed in ${tildify(dirname(unit), home)}`,
  );
}
