/**
 * How long a sandboxed server can read a denied file that appears in its root after it started,
 * before the proxy stops it. The built proxy runs `deny-racer.ts` under `--sandbox` with a deny of every
 * `*.secret` file under its root; the bench creates one such file per try and measures, from the write: its own
 * `fs.watch` event for it (the floor: when anyone watching learns of it), the proxy's report of it
 * on its log (after which it stops the server in the same turn), and how long the old server took
 * to be gone. The racer watches the same directory and copies what it can read: how many tries it
 * won is the window's cost against the strongest adversary.
 */
import { existsSync, mkdirSync, realpathSync, rmSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { dist, report, startDaemon, summary, tempDir } from './common.js';

const TRIES = Number(process.env.TRIES ?? 20);

const dir = realpathSync(tempDir());
mkdirSync(join(dir, 'run'));
const socket = join(dir, 'run', 'rootsd.sock');
const config = join(dir, 'mcp-roots.yaml');
const root = join(dir, 'w', 'r');
mkdirSync(root, { recursive: true });
writeFileSync(
  config,
  `version: 1\nservers:\n  racer:\n    roots:\n      - path: ${root}\n    deny:\n      - "**/*.secret"\n`,
);
mkdirSync(join(dir, 'home'));
const env = { ...process.env, HOME: join(dir, 'home') };
const daemon = await startDaemon({ config, socket, stateDir: join(dir, 'state') }, env);

let log = '';
const count = (text: string): number => log.split(text).length - 1;
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [
    dist('proxy/main.js'),
    ...[
      '--server',
      'racer',
      '--socket',
      socket,
      '--sandbox',
      '--no-enforce',
      '--log-level',
      'debug',
    ],
    ...['--', process.execPath, dist('bench/deny-racer.js'), root],
  ],
  env,
  stderr: 'pipe',
});
/** When each line naming a file reached the bench. */
const seen = new Map<string, number>();
transport.stderr?.on('data', (c: Buffer) => {
  const now = performance.now();
  log += c.toString();
  for (const m of c
    .toString()
    .matchAll(/a denied path appeared in the roots: \S*\/(k\d+\.secret)/g)) {
    if (!seen.has(m[1]!)) seen.set(m[1]!, now);
  }
});
const host = new Client({ name: 'bench-host', version: '0' });

const events = new Map<string, number>();
const floorWatch = watch(root, (event, name) => {
  if (name !== null && !events.has(String(name))) events.set(String(name), performance.now());
});

const until = async (cond: () => boolean, what: string): Promise<void> => {
  for (let i = 0; !cond(); i++) {
    if (i > 6000) throw new Error(`${what}: not within 30 s`);
    await new Promise((r) => setTimeout(r, 5));
  }
};
const idle = (): boolean =>
  count('restarting the server:') === count('restarted the server (ms:') + count('did not take');

const floor: number[] = [];
const detect: number[] = [];
const stop: number[] = [];
let won = 0;
let ok: boolean;
try {
  await host.connect(transport);
  for (let i = 0; i < TRIES; i++) {
    await until(idle, 'the last restart');
    await host.ping();
    const name = `k${i}.secret`;
    const restarts = count('restarted the server (ms:');
    const t0 = performance.now();
    writeFileSync(join(root, name), `S${i}`);
    await until(() => seen.has(name) && events.has(name), `the report of ${name}`);
    await until(() => count('restarted the server (ms:') > restarts, `the restart for ${name}`);
    floor.push(events.get(name)! - t0);
    detect.push(seen.get(name)! - t0);
    const steps = log.split('restarted the server (ms: ').at(-1)!;
    stop.push(Number(/stop at once (\d+)/.exec(steps)?.[1] ?? NaN));
    if (existsSync(join(root, 'loot', name))) won++;
  }
  const f = summary(floor);
  const d = summary(detect);
  const s = summary(stop);
  process.stdout.write(
    `  write to the proxy's report of the new denied file, p50: ${d.p50} ms, p99: ${d.p99} ms (the write's own fs.watch event: p50 ${f.p50} ms)\n` +
      `  the old server gone after the report (SIGKILL to exit), p50: ${s.p50} ms\n` +
      `  tries the racing server read the file first: ${won} of ${TRIES}\n`,
  );
  ok = report('deny-window', { tries: TRIES, floor: f, detect: d, stop: s, racerWon: won }, [
    ['report p50 within 5 ms of the fs.watch floor', d.p50 <= f.p50 + 5],
  ]);
} catch (err) {
  process.stderr.write(`${(err as Error).message}\nthe proxy's log:\n${log}\n`);
  throw err;
} finally {
  floorWatch.close();
  await host.close();
  daemon.kill();
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = ok ? 0 : 1;
