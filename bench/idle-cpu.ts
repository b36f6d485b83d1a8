/**
 * CPU time used by an idle daemon with a 100-root policy (plain roots, dir/* and
 * dir/**\/x globs) and a subscribed client, over 60 seconds, and how often any of its threads
 * woke up. Targets: below 100 ms, and no wake-up at all (nothing is due before the rescan, 300 s
 * away). Runs the built daemon as a child process and reads its CPU time from /proc.
 */
import { mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { RootsClient } from '../protocol/client.js';
import { report, startDaemon, tempDir } from './common.js';

const SECONDS = Number(process.env.SECONDS_IDLE ?? 60);
const PLAIN = 80;
const GLOBS = 15;
const RECURSIVE = 5;
/** Clock ticks per second for /proc/<pid>/stat (USER_HZ; 100 on every Linux build that matters). */
const USER_HZ = 100;

/**
 * The process's CPU time in ms: precise from each thread's schedstat (ns), and from stat (ticks).
 * `runs`: how many times its threads were put on a CPU (schedstat's third field): a thread asleep
 * in epoll or on a condition variable adds nothing, so any change is a wake-up. Reading /proc
 * does not wake the process.
 */
function cpuMs(pid: number): { schedstat: number | undefined; stat: number; runs: number } {
  // Every thread's (the main one, libuv's pool, @parcel/watcher's, V8's): schedstat is per thread.
  let schedstat: number | undefined = 0;
  let runs = 0;
  try {
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      const fields = readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ');
      schedstat += Number(fields[0]) / 1e6;
      runs += Number(fields[2]);
    }
  } catch {
    schedstat = undefined;
  }
  // Fields after the command name (which may contain spaces): state is field 3, utime 14, stime 15.
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { schedstat, stat: (ticks * 1000) / USER_HZ, runs };
}

const dir = realpathSync(tempDir());
const socket = join(dir, 'rootsd.sock');
const config = join(dir, 'mcp-roots.yaml');
const lines = ['version: 1', 'servers:', '  bench:', '    roots:'];
for (let i = 0; i < PLAIN; i++) {
  mkdirSync(join(dir, 'plain', `p${i}`), { recursive: true });
  lines.push(`      - path: ${dir}/plain/p${i}`);
}
for (let i = 0; i < GLOBS; i++) {
  for (let k = 0; k < 5; k++) mkdirSync(join(dir, 'globs', `g${i}`, `m${k}`), { recursive: true });
  lines.push(`      - path: ${dir}/globs/g${i}/*`);
}
for (let i = 0; i < RECURSIVE; i++) {
  mkdirSync(join(dir, 'deep', `r${i}`, 'a', 'b', 'x'), { recursive: true });
  lines.push(`      - path: ${dir}/deep/r${i}/**/x`);
}
writeFileSync(config, `${lines.join('\n')}\n`);
const env = { ...process.env, HOME: dir };
const daemon = await startDaemon({ config, socket, stateDir: join(dir, 'state') }, env);

let ok: boolean;
try {
  const c = await RootsClient.connect({ socket, env, clientInfo: { name: 'bench', version: '0' } });
  const { roots } = await c.listRoots('bench', { subscribe: true });
  const status = await c.status();
  // Let start-up work (the first plan's catch-up look) finish before measuring.
  await delay(2000);
  const pid = daemon.pid!;
  const before = cpuMs(pid);
  // Sample every 10 s too, so that a one-off (V8's memory reducer runs a GC ~8 s after start)
  // can be told from periodic work.
  const slices: number[] = [];
  const wakeSlices: number[] = [];
  let last = before;
  for (let left = SECONDS; left > 0; left -= 10) {
    await delay(Math.min(10, left) * 1000);
    const now = cpuMs(pid);
    slices.push(
      Math.round(((now.schedstat ?? now.stat) - (last.schedstat ?? last.stat)) * 100) / 100,
    );
    wakeSlices.push(now.runs - last.runs);
    last = now;
  }
  const after = last;
  await c.close();
  const used =
    after.schedstat !== undefined ? after.schedstat - before.schedstat! : after.stat - before.stat;
  const round = (x: number) => Math.round(x * 100) / 100;
  const wakeUps = after.runs - before.runs;
  ok = report(
    'idle-cpu',
    {
      seconds: SECONDS,
      policyEntries: PLAIN + GLOBS + RECURSIVE,
      roots: roots.length,
      watchedDirectories: status.watches.directories,
      watchMode: status.watches.mode,
      cpuMs: round(used),
      cpuMsFromStat: round(after.stat - before.stat),
      cpuMsPer10s: slices,
      wakeUps,
      wakeUpsPer10s: wakeSlices,
    },
    [
      [
        `idle daemon (${roots.length} roots, ${status.watches.directories} watched directories) used ${round(used)} ms CPU in ${SECONDS} s < 100 ms`,
        used < 100,
      ],
      [
        `no wake-up of the idle daemon in ${SECONDS} s (its threads were run ${wakeUps} times)`,
        before.schedstat !== undefined && wakeUps === 0,
      ],
    ],
  );
} finally {
  daemon.kill('SIGTERM');
  await new Promise((r) => daemon.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = ok ? 0 : 1;
