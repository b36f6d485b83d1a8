/**
 * Throwaway Unix users for tests that depend on permissions: root reads everything, so such tests
 * run the built daemon (and clients) as a user the test creates and removes.
 */
import { spawn, spawnSync, type ChildProcess, type SpawnSyncReturns } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { bin } from './bin.js';
import { poll } from './poll.js';
import { REPO } from './repo.js';

export interface TestUser {
  name: string;
  uid: number;
  gid: number;
  /** A short directory owned by the user, mode 0700: its home, and room for sockets and state. */
  home: string;
  /** Processes started as this user that are still running; killed before the user is removed. */
  running: Set<{ kill(): Promise<unknown> }>;
}

type Teardown = { teardown(fn: () => unknown): void };

const TOOLS = ['useradd', 'userdel', 'setpriv'] as const;

function which(tool: string): string | undefined {
  for (const dir of ['/usr/sbin', '/usr/bin', '/sbin', '/bin']) {
    if (existsSync(join(dir, tool))) return join(dir, tool);
  }
  return undefined;
}

/**
 * Throw unless this process can create users (root, with useradd, userdel and setpriv): a
 * permission test must fail loudly, never skip, where it cannot run.
 */
export function requireUserTools(): void {
  if (process.getuid?.() !== 0) {
    throw new Error('permission tests create Unix users and must run as root (as CI does)');
  }
  const missing = TOOLS.filter((tool) => which(tool) === undefined);
  if (missing.length > 0) {
    throw new Error(
      `${missing.join(', ')} not found: install passwd (useradd, userdel) and util-linux (setpriv); .ci/run does`,
    );
  }
  requireReachable(REPO, 'the checkout');
  requireReachable(dirname(process.execPath), "Node's directory");
}

/**
 * Throw unless another user can reach what is in directory `path`: it and every directory above
 * it must let others in (mode o+x). The throwaway users run the checkout's built files with the same Node; a checkout
 * under a private directory (`mktemp -d` makes one 0700) fails every permission test with a
 * message about a missing module instead of saying why.
 */
function requireReachable(path: string, what: string): void {
  for (let dir = path; ; dir = dirname(dir)) {
    const mode = statSync(dir).mode;
    if ((mode & 0o001) === 0) {
      throw new Error(
        `${what} ${path} is not reachable by other users: ${dir} has mode ${(mode & 0o777).toString(8)}. ` +
          'The permission tests run it as a throwaway user; put the checkout (and Node) where others may enter (chmod o+x on each directory above it).',
      );
    }
    if (dir === '/') return;
  }
}

function run(command: string, args: string[]): string {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  if (r.status !== 0) {
    throw new Error(`${command} ${args.join(' ')} failed (${r.status}): ${r.stderr || r.stdout}`);
  }
  return r.stdout;
}

/** Create a user `mrtest<random>` with a private directory; `t` removes both at the end. */
export function createUser(t: Teardown): TestUser {
  requireUserTools();
  const name = `mrtest${randomBytes(4).toString('hex')}`;
  const home = mkdtempSync(join(tmpdir(), 'mru-'));
  run(which('useradd')!, [
    '--no-create-home',
    '--home-dir',
    home,
    '--shell',
    '/usr/sbin/nologin',
    '--user-group',
    name,
  ]);
  const uid = Number(run('id', ['-u', name]).trim());
  const gid = Number(run('id', ['-g', name]).trim());
  chownSync(home, uid, gid);
  chmodSync(home, 0o700);
  const running = new Set<{ kill(): Promise<unknown> }>();
  t.teardown(async () => {
    // userdel refuses a user that still runs something: stop what the test started, by pid.
    await Promise.all([...running].map((p) => p.kill()));
    const r = spawnSync(which('userdel')!, [name], { encoding: 'utf8' });
    rmSync(home, { recursive: true, force: true });
    if (r.status !== 0) throw new Error(`userdel ${name} failed: ${r.stderr}`);
  });
  return { name, uid, gid, home, running };
}

/** A clean environment for `user`'s processes: nothing of root's (tap's loaders, XDG dirs). */
export function userEnv(
  user: TestUser,
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: user.home,
    USER: user.name,
    LANG: 'C.UTF-8',
    ...extra,
  };
}

/**
 * The argv that runs `command ARGS` as `user` (real and effective ids, supplementary groups) with
 * exactly `env`: tap's process-info hook adds its own variables (and a NODE_OPTIONS loader that
 * writes under .tap/) to every child's environment, so `env -i` clears them at the last step.
 */
export function asUser(
  user: TestUser,
  command: string,
  args: string[],
  env: Record<string, string> = userEnv(user),
): [string, string[]] {
  const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  return [
    which('setpriv')!,
    [
      `--reuid=${user.uid}`,
      `--regid=${user.gid}`,
      '--init-groups',
      '--',
      which('env')!,
      '-i',
      ...vars,
      command,
      ...args,
    ],
  ];
}

/** Run `command ARGS` as `user` to completion. */
export function runAs(
  user: TestUser,
  command: string,
  args: string[],
  env: Record<string, string> = {},
): SpawnSyncReturns<string> {
  const [cmd, argv] = asUser(user, command, args, userEnv(user, env));
  return spawnSync(cmd, argv, { encoding: 'utf8', timeout: 20_000 });
}

/** Run a snippet of JavaScript (an ES module) with node as `user`. */
export function nodeAs(user: TestUser, script: string): SpawnSyncReturns<string> {
  return runAs(user, process.execPath, ['--input-type=module', '-e', script]);
}

export interface UserDaemon {
  child: ChildProcess;
  /** stderr and stdout so far. */
  output: () => string;
  exited: Promise<number | null>;
  /** SIGTERM, then wait for the exit. */
  stop(): Promise<number | null>;
}

/**
 * Start the built `mcp-rootsd ARGS` as `user`; resolves once it logs "listening on" (or exits, or
 * 10 s pass). `t` kills it at the end if it still runs.
 */
export async function spawnDaemonAs(
  user: TestUser,
  args: string[],
  t: Teardown,
  env: Record<string, string> = {},
): Promise<UserDaemon> {
  const [cmd, argv] = asUser(
    user,
    process.execPath,
    [bin('daemon'), ...args],
    userEnv(user, { NO_COLOR: '1', ...env }),
  );
  const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stderr.on('data', (b: Buffer) => (out += b.toString()));
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  let done = false;
  const handle = {
    kill: async () => {
      if (!done) child.kill('SIGKILL');
      return exited;
    },
  };
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => {
      done = true;
      user.running.delete(handle);
      resolve(code);
    }),
  );
  user.running.add(handle);
  t.teardown(() => handle.kill());
  await poll(() => done || /listening on/.test(out), 10_000);
  return {
    child,
    output: () => out,
    exited,
    async stop() {
      if (!done) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** A random suffix, for names that must be unique per run. */
export function unique(): string {
  return randomBytes(3).toString('hex');
}
