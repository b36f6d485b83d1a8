/**
 * Issue 3: roots/list round trips from a separate client process against the daemon and a bare
 * line-JSON echo server measured in the same run (p50 within 1.3x, p99 within 2x), and 1,000
 * subscribed connections all receiving one change.
 */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RootsClient } from '../protocol/client.js';
import { dist, report, startDaemon, startNode, summary, tempDir } from './common.js';

const COUNT = Number(process.env.BENCH_COUNT ?? 5000);
const WARMUP = 1000;
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);

const dir = tempDir();
const debug = (m: string) => {
  if (process.env.BENCH_DEBUG) process.stderr.write(`${m}\n`);
};
const children: { kill(): boolean }[] = [];
try {
  for (let i = 0; i < 8; i++) mkdirSync(join(dir, 'work', `project-${i}`), { recursive: true });
  mkdirSync(join(dir, 'grant'));
  const config = join(dir, 'policy.yaml');
  writeFileSync(
    config,
    `version: 1\nservers:\n  bench:\n    roots:\n      - path: ${dir}/work/*\n        readOnly: true\n`,
  );
  const socket = join(dir, 'run', 'd.sock');
  debug('starting daemon');
  const daemon = await startDaemon({ config, socket, stateDir: join(dir, 'state') });
  children.push(daemon);

  // The echo server answers with the daemon's own result bytes.
  debug('daemon up');
  const client = await RootsClient.connect({ socket });
  const result = await client.listRoots('bench');
  writeFileSync(join(dir, 'payload.json'), JSON.stringify(result));
  const echoSocket = join(dir, 'echo.sock');
  const echo = await startNode(
    [dist('bench/echo-server.js'), echoSocket, join(dir, 'payload.json')],
    () => existsSync(echoSocket),
  );
  children.push(echo);

  debug('echo up');
  const rtt = (path: string) =>
    JSON.parse(
      execFileSync(
        process.execPath,
        [dist('bench/rtt-client.js'), path, String(COUNT), String(WARMUP)],
        { encoding: 'utf8' },
      ),
    ) as number[];
  // Alternate the two, so that whatever else the machine does falls on both.
  const daemonSamples: number[] = [];
  const echoSamples: number[] = [];
  for (let round = 0; round < 3; round++) {
    echoSamples.push(...rtt(echoSocket));
    daemonSamples.push(...rtt(socket));
  }
  debug('rtt done');
  const d = summary(daemonSamples);
  const e = summary(echoSamples);

  // 1,000 subscribers, one change.
  const subs = spawn(
    process.execPath,
    [dist('bench/subscribers.js'), socket, String(SUBSCRIBERS)],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  children.push(subs);
  let out = '';
  subs.stdout.setEncoding('utf8');
  await new Promise<void>((resolve) =>
    subs.stdout.on('data', (c: string) => {
      out += c;
      if (out.includes('ready\n')) resolve();
    }),
  );
  out = '';
  subs.stdin.write(`${performance.timeOrigin + performance.now()}\n`);
  await client.grant('bench', join(dir, 'grant'), { seconds: 600 });
  await new Promise<void>((resolve) => subs.stdout.on('end', () => resolve()));
  const received = JSON.parse(out.trim()) as number[];
  const s = summary(received);
  await client.close();

  const ok = report(
    'socket',
    {
      count: COUNT * 3,
      rootsInAnswer: result.roots.length,
      answerBytes: JSON.stringify(result).length,
      daemonMs: d,
      echoMs: e,
      subscribers: SUBSCRIBERS,
      notified: received.length,
      notifyMs: s,
    },
    [
      [
        `daemon p50 ${d.p50} ms within 1.3x of echo p50 ${e.p50} ms (ratio ${(d.p50 / e.p50).toFixed(2)})`,
        d.p50 <= 1.3 * e.p50,
      ],
      [
        `daemon p99 ${d.p99} ms within 2x of echo p99 ${e.p99} ms (ratio ${(d.p99 / e.p99).toFixed(2)})`,
        d.p99 <= 2 * e.p99,
      ],
      [
        `${received.length} of ${SUBSCRIBERS} subscribers notified (last after ${s.max} ms)`,
        received.length === SUBSCRIBERS,
      ],
    ],
  );
  process.exitCode = ok ? 0 : 1;
} finally {
  for (const c of children) c.kill();
  rmSync(dir, { recursive: true, force: true });
}
