/**
 * One server churning its root must not stall the others. Server B's root is a writable `**`
 * glob over a large tree; B's agent creates a directory in it every 0.2 s. Meanwhile server A
 * asks `roots/check` over and over from its own connection. Figure: A's p99 while B churns,
 * beside A's p99 with no churn (the floor, measured in the same run on the same daemon).
 * Target: the churn may add at most a few milliseconds to A's p99.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { RootsClient } from '../protocol/client.js';
import { dist, makeDirTree, report, startTreeDaemon, summary, tempDir } from './common.js';

/** Folders under B's root (scaled with STALL_FOLDERS to stay in time on a slow machine). */
const FOLDERS = Number(process.env.STALL_FOLDERS ?? 30_000);
/** How long each phase asks (s), and how often B creates a directory (ms). */
const SECONDS = Number(process.env.STALL_SECONDS ?? 15);
const CREATE_EVERY_MS = 200;
/** What "a few milliseconds" allows above the floor. */
const ALLOWED_MS = 5;
/** The machine's load average (1 min): a figure taken above about 2 on 2 cores is not a baseline. */
const load = () => loadavg()[0]!.toFixed(2);

const dir = realpathSync(tempDir());
const socket = join(dir, 'run', 'rootsd.sock');
mkdirSync(join(dir, 'run'), { mode: 0o700 });
const config = join(dir, 'mcp-roots.yaml');
const a = join(dir, 'a');
const b = join(dir, 'b');
mkdirSync(join(a, 'work'), { recursive: true });
// 30,000 folders as 100 projects of 300: a tree like a large checkout.
makeDirTree(b, FOLDERS, { prefix: 'd', perGroup: 300, groupPrefix: 'p' });
mkdirSync(join(b, 'churn'));
writeFileSync(
  config,
  `version: 1\nservers:\n  a:\n    roots:\n      - path: ${a}\n  b:\n    roots:\n      - path: ${b}/**\n`,
);
const env = { ...process.env, HOME: dir };
const daemon = await startTreeDaemon({ dir, config, socket, logVar: 'STALL_LOG' }, env, 120_000);

/** With STALL_TRACE=<ms>, each check slower than that is printed with its time (to set beside the daemon's log). */
const TRACE = process.env.STALL_TRACE !== undefined;
const TRACE_MS = Number(process.env.STALL_TRACE ?? 0);

/** How often A asks (ms). Asked on a clock, not one after another, so a stall counts fully. */
const ASK_EVERY_MS = 10;

/** A's checks, one every ASK_EVERY_MS for `seconds`, each answer's delay in ms. */
async function askFor(c: RootsClient, seconds: number): Promise<number[]> {
  const path = join(a, 'work', 'file.txt');
  const asks: Promise<number>[] = [];
  const ask = async () => {
    const t0 = performance.now();
    const r = await c.request(
      'roots/check',
      { server: 'a', path, access: 'write' },
      { timeoutMs: 600_000 },
    );
    if (!r.allowed) throw new Error(`A's check refused: ${r.reason}`);
    const ms = performance.now() - t0;
    if (TRACE && ms > TRACE_MS)
      console.error(`${new Date().toISOString()} slow check ${ms.toFixed(1)} ms`);
    return ms;
  };
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    asks.push(ask());
    await new Promise((r) => setTimeout(r, ASK_EVERY_MS));
  }
  return Promise.all(asks);
}

/** B's subscriber, in a process of its own (stall-subscriber.ts); its stdout, line by line. */
function startSubscriber(): {
  lines: AsyncIterator<string>;
  tell: (line: string) => void;
  kill: () => void;
} {
  const child = spawn(process.execPath, [dist('bench/stall-subscriber.js'), socket], {
    env,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  return {
    lines,
    tell: (line) => child.stdin.write(`${line}\n`),
    kill: () => child.kill(),
  };
}

async function nextLine(lines: AsyncIterator<string>, what: string): Promise<string[]> {
  const r = await lines.next();
  if (r.done === true) throw new Error(`B's subscriber exited before ${what}`);
  return r.value.split(' ');
}

let ok: boolean;
const sub = startSubscriber();
try {
  const ca = await RootsClient.connect({
    socket,
    env,
    clientInfo: { name: 'server-a', version: '0' },
  });
  const [, firstRoots, firstMs] = await nextLine(sub.lines, 'its first list');
  const first = Number(firstRoots);
  await askFor(ca, 1); // warm-up
  const loadBefore = load();
  let n = 0;
  if (TRACE) console.error(`${new Date().toISOString()} churn starts`);
  const churn = setInterval(() => mkdirSync(join(b, 'churn', `c${n++}`)), CREATE_EVERY_MS);
  setTimeout(() => clearInterval(churn), SECONDS * 1000);
  const stalled = await askFor(ca, SECONDS);
  clearInterval(churn);
  // B's list must still follow: every created folder ends up among B's roots.
  const want = first + n;
  sub.tell(`want ${want}`);
  const [, notes, lastRoots] = (await nextLine(sub.lines, 'the end of the churn')).map(Number);
  if (TRACE) console.error(`${new Date().toISOString()} churn over, B's list complete`);
  // The floor: the same daemon, the same checks, once B's tree is quiet again.
  const floor = await askFor(ca, SECONDS);
  await ca.close();
  const f = summary(floor);
  const s = summary(stalled);
  ok = report(
    'stall',
    {
      folders: FOLDERS,
      load: `${loadBefore} -> ${load()}`,
      // What the churn adds to A's p99 (the target allows ALLOWED_MS).
      addedP99Ms: Number((s.p99 - f.p99).toFixed(3)),
      firstListMs: Number(firstMs),
      seconds: SECONDS,
      creates: n,
      notificationsToB: notes,
      bRoots: { first, last: lastRoots, want },
      noChurnMs: f,
      churnMs: s,
    },
    [
      [
        `A's roots/check p99 while B churns ${s.p99} ms (max ${s.max}, ${s.n} checks) <= no-churn p99 ${f.p99} ms + ${ALLOWED_MS} ms`,
        s.p99 <= f.p99 + ALLOWED_MS,
      ],
      [`B's list follows the churn: ${lastRoots} of ${want} roots`, lastRoots === want],
    ],
  );
} finally {
  sub.kill();
  daemon.kill('SIGTERM');
  await new Promise((r) => daemon.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = ok ? 0 : 1;
