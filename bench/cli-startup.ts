/**
 * rootsctl start-up, hyperfine-style: warm-up runs, then N timed runs of each command line, taken
 * in turns with `node -e 0` (Node's own start), the floor measured in the same run and printed
 * beside each command. Target: each command starts and ends in under 200 ms at p50, Node's own
 * start included (a figure taken on a loaded machine says so by its floor), run as npm installs
 * it: `node_modules/.bin/rootsctl`, a link to the package's bin, whose first lines are for sh
 * (cli/launcher.ts: Node starts without NODE_EXTRA_CA_CERTS). Beside it, for information: `node
 * dist/cli/main.js` (the same file started by Node directly, as the README's clone form and the
 * tests do), and the ways the README could tell people to run it.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { RootsClient } from '../protocol/client.js';
import { dist, report, ROOT, startDaemon, summary, tempDir } from './common.js';

const RUNS = Number(process.env.STARTUP_RUNS ?? 20);
const WARMUP = 3;
const TARGET_MS = 200;

/**
 * Spawn-to-exit times of each command line, taken in turns (one run of each, then the next round),
 * so that a change in the machine's load falls on the floor and the commands alike.
 */
function timeInTurns(lines: [string, string[]][], env: NodeJS.ProcessEnv): number[][] {
  const samples: number[][] = lines.map(() => []);
  for (let i = 0; i < WARMUP + RUNS; i++) {
    lines.forEach(([file, args], j) => {
      const start = process.hrtime.bigint();
      const r = spawnSync(file, args, { env, stdio: 'ignore', cwd: ROOT });
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      if (r.error) throw r.error;
      if (i >= WARMUP) samples[j]!.push(ms);
    });
  }
  return samples;
}

/** One command line's times, alone. */
function time(file: string, args: string[], env: NodeJS.ProcessEnv): number[] {
  return timeInTurns([[file, args]], env)[0]!;
}

const load = () => loadavg()[0]!.toFixed(1);
const loadBefore = load();
const dir = tempDir();
const socket = join(dir, 'rootsd.sock');
const config = join(dir, 'mcp-roots.yaml');
writeFileSync(config, `version: 1\nservers:\n  fs:\n    roots: [{path: ${dir}}]\n`);
const daemon = await startDaemon({ config, socket, stateDir: join(dir, 'state') });
(await RootsClient.connect({ socket })).close().catch(() => undefined);
const env = { ...process.env, MCP_ROOTS_SOCKET: socket, MCP_ROOTS_CONFIG: config };
const cli = dist('cli/main.js');
const node = process.execPath;

// A project that installed mcp-roots has node_modules/.bin/rootsctl: make one, as npm does (a
// relative link to the package's bin, dist/cli/rootsctl.cjs; a global install links the same way).
const project = join(dir, 'project');
mkdirSync(join(project, 'node_modules', '.bin'), { recursive: true });
symlinkSync(ROOT, join(project, 'node_modules', 'mcp-roots'));
const binFile = (
  JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { bin: Record<string, string> }
).bin.rootsctl!;
const bin = join(project, 'node_modules', '.bin', 'rootsctl');
symlinkSync(join('..', 'mcp-roots', binFile), bin);
// npm makes a bin executable when it links it; the build does too, but say so.
chmodSync(join(ROOT, binFile), 0o755);

const commands: [string, string[]][] = [
  ['--version', ['--version']],
  ['status', ['status']],
  ['list fs', ['list', 'fs']],
  ['validate', ['validate']],
];
// NODE_EXTRA_CA_CERTS makes Node 20 read and parse the named certificates (on top of its own
// roots) while it starts, before any script runs: on this project's machine, where it is set,
// that is a third of `node -e 0` (Node 22 defers it to the first TLS use; Node 24 pays a
// little). It is kept in the environment (the figures are what a person with it set gets): the
// bin starts Node without it and `node dist/cli/main.js` with it, and the floor and the direct
// runs are also timed without it, as rows for information (the bin against those shows what its
// sh lines cost).
const extraCa = process.env.NODE_EXTRA_CA_CERTS !== undefined;
const withoutCa = (file: string, args: string[]): [string, string[]] => [
  'env',
  ['-u', 'NODE_EXTRA_CA_CERTS', file, ...args],
];
// rootsctl keeps V8's code cache per command (cli/code-cache.ts); the warm-up runs make it, so
// the rows above are a later run's. A first run (or one whose cache cannot be used) compiles
// everything it runs: timed with the cache turned off, for information. (`--version` and
// `--help` use no cache: they are answered before any bundle is read.)
const firstRuns: [string, string[]][] = [
  ['status', ['status']],
  ['validate', ['validate']],
];
const groups = {
  floor: [[node, ['-e', '0']]],
  floorWithout: extraCa ? [withoutCa(node, ['-e', '0'])] : [],
  bin: commands.map(([, args]): [string, string[]] => [bin, args]),
  direct: commands.map(([, args]): [string, string[]] => [node, [cli, ...args]]),
  directWithout: extraCa ? commands.map(([, args]) => withoutCa(node, [cli, ...args])) : [],
  first: firstRuns.map(([, args]): [string, string[]] => [
    'env',
    ['MCP_ROOTS_CODE_CACHE=0', bin, ...args],
  ]),
} satisfies Record<string, [string, string[]][]>;
const order = Object.keys(groups) as (keyof typeof groups)[];
const all = timeInTurns(
  order.flatMap((g) => groups[g]),
  env,
);
/** Each group's samples, in the order its lines were given. */
const timed = {} as Record<keyof typeof groups, number[][]>;
for (const g of order) timed[g] = all.splice(0, groups[g].length);

const floor = summary(timed.floor[0]!);
const floorWithout = extraCa ? summary(timed.floorWithout[0]!) : undefined;
const rows: Record<string, ReturnType<typeof summary>> = { 'node -e 0': floor };
if (floorWithout) rows['node -e 0, without NODE_EXTRA_CA_CERTS'] = floorWithout;
const verdicts: [string, boolean][] = [];
commands.forEach(([name], i) => {
  const s = summary(timed.bin[i]!);
  rows[`node_modules/.bin/rootsctl ${name}`] = s;
  const floors = `node -e 0 at ${floor.p50.toFixed(0)} ms${floorWithout ? `, ${floorWithout.p50.toFixed(0)} ms without NODE_EXTRA_CA_CERTS` : ''}`;
  verdicts.push([
    `rootsctl ${name} (npm's bin link): p50 ${s.p50.toFixed(0)} ms beside ${floors}; target < ${TARGET_MS} ms`,
    s.p50 < TARGET_MS,
  ]);
});
commands.forEach(([name], i) => {
  rows[`node dist/cli/main.js ${name}`] = summary(timed.direct[i]!);
});
if (extraCa) {
  commands.forEach(([name], i) => {
    rows[`node dist/cli/main.js ${name}, without it`] = summary(timed.directWithout[i]!);
  });
}
firstRuns.forEach(([name], i) => {
  rows[`rootsctl ${name}, no code cache (a first run)`] = summary(timed.first[i]!);
});
// The forms a README can give; the npm ones add npm's own start-up. Informational: no target.
const forms: [string, string, string[]][] = [
  ['npm exec --offline -- rootsctl', 'npm', ['exec', '--offline', '--', 'rootsctl', '--version']],
  ['npx rootsctl', 'npx', ['rootsctl', '--version']],
];
// STARTUP_FORMS=0 leaves them out (npm's start-up is seconds on a loaded machine).
for (const [name, file, args] of process.env.STARTUP_FORMS === '0' ? [] : forms) {
  try {
    rows[`${name} --version`] = summary(time(file, args, env));
  } catch (err) {
    process.stdout.write(`  (${name}: ${(err as Error).message})\n`);
  }
}
daemon.kill();
// Start-up times move with the machine's load: the floor above is from the same run, and so is this.
process.stdout.write(`  load average ${loadBefore} at the start, ${load()} at the end\n`);
for (const [name, s] of Object.entries(rows)) {
  process.stdout.write(
    `  ${name.padEnd(44)} p50 ${s.p50.toFixed(1).padStart(7)} ms  min ${s.min.toFixed(1).padStart(7)}  max ${s.max.toFixed(1).padStart(7)}  (n=${s.n})\n`,
  );
}
const ok = report('cli-startup', { runs: RUNS, rows }, verdicts);
process.exitCode = ok ? 0 : 1;
