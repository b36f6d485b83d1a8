/**
 * roots/list round trips from a separate client process against the daemon and a bare line-JSON
 * echo server measured in the same run (p50 within 1.0x, p99 within 1.5x), and 1,000 subscribed
 * connections all receiving one change: a grant (answered at once) and a policy edit (after the
 * settle window that lets editors finish a multi-step save; last arrival within it + 20 ms),
 * each beside the floor: the bare server pushing the same list to the same 1,000 subscribers.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RootsClient } from '../protocol/client.js';
import {
  dist,
  pinToOneCpu,
  PIN_CPU,
  report,
  startDaemon,
  startNode,
  summary,
  tempDir,
} from './common.js';

const COUNT = Number(process.env.BENCH_COUNT ?? 20000);
const WARMUP = 1000;
const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);
/** The daemon's default settle window for policy-file events (`--settle-ms`). */
const SETTLE_MS = 50;

const dir = tempDir();
const children: ChildProcess[] = [];
try {
  for (let i = 0; i < 8; i++) mkdirSync(join(dir, 'work', `project-${i}`), { recursive: true });
  mkdirSync(join(dir, 'grant'));
  const config = join(dir, 'policy.yaml');
  writeFileSync(
    config,
    `version: 1\nservers:\n  bench:\n    roots:\n      - path: ${dir}/work/*\n        readOnly: true\n`,
  );
  const socket = join(dir, 'run', 'd.sock');
  const daemon = await startDaemon({ config, socket, stateDir: join(dir, 'state') });
  children.push(daemon);

  // The echo server answers with the daemon's own result bytes.
  const client = await RootsClient.connect({ socket });
  const result = await client.listRoots('bench');
  writeFileSync(join(dir, 'payload.json'), JSON.stringify(result));
  const echoSocket = join(dir, 'echo.sock');
  const echo = await startNode(
    [dist('bench/echo-server.js'), echoSocket, join(dir, 'payload.json')],
    () => existsSync(echoSocket),
  );
  children.push(echo);

  // One client alternates between the two servers request by request, and all three run on one
  // CPU: a round trip between cores costs ~35 us more than one on a core, and where the scheduler
  // puts each process otherwise decides the figures more than either server does.
  const pinned = pinToOneCpu([daemon.pid!, echo.pid!]);
  const clientArgs = [
    dist('bench/rtt-client.js'),
    socket,
    echoSocket,
    String(COUNT),
    String(WARMUP),
  ];
  const [daemonSamples, echoSamples] = JSON.parse(
    pinned
      ? execFileSync('taskset', ['-c', PIN_CPU, process.execPath, ...clientArgs], {
          encoding: 'utf8',
        })
      : execFileSync(process.execPath, clientArgs, { encoding: 'utf8' }),
  ) as [number[], number[]];
  const d = summary(daemonSamples);
  const e = summary(echoSamples);

  // 1,000 subscribers, one change each time: a grant, then an edit of the policy file; before and
  // after them the bare server's push of the same list (the floor: one process writing 1,000
  // sockets and another reading them takes tens of ms on two cores, whatever the daemon does).
  const pushFirst = await notifyAll(echoSocket, () => pushFromEcho(echo));
  const granted = await notifyAll(socket, () =>
    client.grant('bench', join(dir, 'grant'), { seconds: 600 }).then(() => undefined),
  );
  const edited = await notifyAll(socket, () => {
    writeFileSync(
      config,
      `version: 1\nservers:\n  bench:\n    roots:\n      - path: ${dir}/work/*\n        readOnly: true\n      - path: ${dir}/grant\n`,
    );
    return Promise.resolve();
  });
  const pushLast = await notifyAll(echoSocket, () => pushFromEcho(echo));
  const g = summary(granted);
  const s = summary(edited);
  const floors = [summary(pushFirst).max, summary(pushLast).max];
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
      grantNotified: granted.length,
      grantNotifyMs: g,
      editNotified: edited.length,
      editNotifyMs: s,
      barePushLastMs: floors,
    },
    [
      [
        `daemon p50 ${d.p50} ms within 1.0x of echo p50 ${e.p50} ms (ratio ${(d.p50 / e.p50).toFixed(2)})`,
        d.p50 <= e.p50,
      ],
      [
        `daemon p99 ${d.p99} ms within 1.5x of echo p99 ${e.p99} ms (ratio ${(d.p99 / e.p99).toFixed(2)})`,
        d.p99 <= 1.5 * e.p99,
      ],
      [
        `grant: ${granted.length} of ${SUBSCRIBERS} subscribers notified (last after ${g.max} ms; a bare server's push to them: ${floors.join(' and ')} ms)`,
        granted.length === SUBSCRIBERS,
      ],
      [
        `policy edit: ${edited.length} of ${SUBSCRIBERS} notified, last after ${s.max} ms (settle ${SETTLE_MS} ms + a bare push ${floors.join(' and ')} ms); target <= settle ${SETTLE_MS} ms + 20 ms`,
        edited.length === SUBSCRIBERS && s.max <= SETTLE_MS + 20,
      ],
    ],
  );
  process.exitCode = ok ? 0 : 1;
} finally {
  // Let every process exit before its directory goes, so none sees its socket vanish.
  await Promise.all(
    children.map(
      (c) =>
        new Promise((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) resolve(undefined);
          else {
            c.once('exit', resolve);
            c.kill();
          }
        }),
    ),
  );
  rmSync(dir, { recursive: true, force: true });
}

/** Have the bare server push its list to every connection that subscribed to it. */
function pushFromEcho(echo: ChildProcess): Promise<void> {
  echo.kill('SIGUSR2');
  return Promise.resolve();
}

/**
 * Subscribe SUBSCRIBERS connections (in a process of their own), make one change, and return
 * each connection's delay from the change to its `list_changed`, in ms.
 */
async function notifyAll(socket: string, change: () => Promise<void>): Promise<number[]> {
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
  await change();
  await new Promise<void>((resolve) => subs.stdout.on('end', () => resolve()));
  return JSON.parse(out.trim()) as number[];
}
