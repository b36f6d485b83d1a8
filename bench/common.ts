/** Small helpers shared by the benchmarks. */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (benchmarks run from dist/bench). */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A built entry point, e.g. `daemon/main.js`. */
export function dist(rel: string): string {
  return join(ROOT, 'dist', rel);
}

/** A short temp directory (sockets must fit in sun_path). */
export function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'mrb-'));
}

/** The value at quantile q of sorted numbers. */
export function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

/** p50/p99/min/max of samples in milliseconds. */
export function summary(samples: number[]): {
  n: number;
  p50: number;
  p99: number;
  min: number;
  max: number;
} {
  const s = [...samples].sort((a, b) => a - b);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return {
    n: s.length,
    p50: r(quantile(s, 0.5)),
    p99: r(quantile(s, 0.99)),
    min: r(s[0] ?? NaN),
    max: r(s.at(-1) ?? NaN),
  };
}

/** Start a node script; resolve once `ready` returns true (checked every 20 ms, up to `waitMs`). */
export async function startNode(
  args: string[],
  ready: () => boolean,
  env: NodeJS.ProcessEnv = process.env,
  waitMs = 10_000,
): Promise<ChildProcess> {
  // BENCH_NODE_ARGS (say `--cpu-prof --cpu-prof-dir=/tmp/prof`) goes to every process started
  // here: Node refuses profiling flags in NODE_OPTIONS.
  const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const child = spawn(process.execPath, [...nodeArgs, ...args], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env,
  });
  for (let i = 0; i < waitMs / 20; i++) {
    if (ready()) return child;
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  child.kill();
  throw new Error(`${args.join(' ')} did not become ready`);
}

/** Start the built daemon on a socket; resolves once the socket exists. */
export function startDaemon(
  args: { config: string; socket: string; stateDir: string; extra?: string[] },
  env?: NodeJS.ProcessEnv,
  waitMs?: number,
) {
  return startNode(
    [
      dist('daemon/main.js'),
      '--config',
      args.config,
      '--socket',
      args.socket,
      '--state-dir',
      args.stateDir,
      '--log-level',
      'warn',
      ...(args.extra ?? []),
    ],
    () => existsSync(args.socket),
    asDaemonStarts(env ?? process.env),
    waitMs,
  );
}

/**
 * The environment the daemon starts with as installed: its bin's first lines and its systemd unit
 * both leave `NODE_EXTRA_CA_CERTS` out (common/extra-ca-certs.ts). Started as `node <bin>` here, so
 * that `BENCH_NODE_ARGS` reach Node, it would otherwise parse the certificates and keep them.
 */
export function asDaemonStarts(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { NODE_EXTRA_CA_CERTS: _left, ...rest } = env;
  return rest;
}

/**
 * The daemon on `config` and `socket` with its state in `<dir>/state`, for a benchmark that
 * builds a large tree: the variable `logVar` (say `BIG_LOG=debug`) shows each recompute and how
 * long it took.
 */
export function startTreeDaemon(
  args: { dir: string; config: string; socket: string; logVar: string },
  env: NodeJS.ProcessEnv,
  waitMs: number,
) {
  const level = process.env[args.logVar];
  return startDaemon(
    {
      config: args.config,
      socket: args.socket,
      stateDir: join(args.dir, 'state'),
      extra: level ? ['--log-level', level] : [],
    },
    env,
    waitMs,
  );
}

/**
 * `count` empty directories under `base` (created too): `<prefix><i>` side by side, or with
 * `perGroup`, in groups of that many (`<groupPrefix><g>/<prefix><i>`), like a large checkout.
 */
export function makeDirTree(
  base: string,
  count: number,
  layout: { prefix: string; perGroup?: number; groupPrefix?: string },
): void {
  mkdirSync(base, { recursive: true });
  const per = layout.perGroup ?? count;
  for (let g = 0; g * per < count; g++) {
    const group =
      layout.perGroup === undefined ? base : join(base, `${layout.groupPrefix ?? 'g'}${g}`);
    mkdirSync(group, { recursive: true });
    for (let i = 0; i < per && g * per + i < count; i++)
      mkdirSync(join(group, `${layout.prefix}${i}`));
  }
}

/** Print a result line for people and one JSON line for programs. */
export function report(
  name: string,
  result: Record<string, unknown>,
  verdicts: [string, boolean][],
): boolean {
  const ok = verdicts.every(([, pass]) => pass);
  process.stdout.write(
    `${JSON.stringify({ bench: name, ...result, verdicts: Object.fromEntries(verdicts), ok })}\n`,
  );
  for (const [what, pass] of verdicts)
    process.stdout.write(`  ${pass ? 'PASS' : 'FAIL'} ${name}: ${what}\n`);
  return ok;
}

/** The reference filesystem server's entry file. */
export const FS_SERVER = join(
  ROOT,
  'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js',
);

/** The built proxy's arguments (after `node`) for server `fs` on `socket`, in front of the filesystem server. */
export function proxyArgs(
  socket: string,
  serverArgs: string[] = [],
  proxyOptions: string[] = [],
): string[] {
  return [
    dist('proxy/main.js'),
    '--server',
    'fs',
    '--socket',
    socket,
    ...proxyOptions,
    '--',
    process.execPath,
    FS_SERVER,
    ...serverArgs,
  ];
}

/** The CPU `pinToOneCpu` puts processes on (`BENCH_CPU`). */
export const PIN_CPU = process.env.BENCH_CPU ?? '0';

/**
 * Pin processes (every thread, and those they start later) to one CPU with taskset; false where
 * taskset is missing. Two servers compared request by request on a machine's different cores
 * are compared more by where the scheduler put them than by their own work (README.md).
 */
export function pinToOneCpu(pids: number[]): boolean {
  try {
    for (const pid of pids)
      execFileSync('taskset', ['-a', '-p', '-c', PIN_CPU, String(pid)], { stdio: 'ignore' });
    return true;
  } catch {
    process.stderr.write(
      'taskset not found (util-linux): measuring unpinned, expect noisy figures\n',
    );
    return false;
  }
}
