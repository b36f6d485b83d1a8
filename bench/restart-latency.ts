/**
 * From a grant to the first answer of the restarted server: the reference filesystem server is
 * started as `{roots}` behind the built proxy, a 2025-era host (SDK v1 Client) calls
 * `list_allowed_directories` as soon as the proxy starts the restart, and that call, held during
 * the restart, is answered by the new server. Beside it, the floor: the same server's own cold
 * start to its first answer. Target: p50 < 1 s.
 *
 * The breakdown says where the time goes: from the grant to the proxy hearing of it (the daemon's
 * push), then each step the proxy logs for the restart (server-swap.ts: its settling wait and
 * planning, the old server's drain, lists and stop, the wait for the new server, whose start runs
 * beside those), then the held call's answer.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { RootsClient } from '../protocol/client.js';
import { SEQUENTIAL_START } from '../proxy/server-swap.js';
import { FS_SERVER, proxyArgs, report, startDaemon, summary, tempDir } from './common.js';

const TRIES = Number(process.env.TRIES ?? 15);
/**
 * `RESTART_SANDBOX=1`: the server runs sandboxed, whose restart waits for the old instance to
 * exit before the new one starts (server-swap.ts `sequential`). The floor stays the server's
 * own cold start, unsandboxed.
 */
const SANDBOX = process.env.RESTART_SANDBOX === '1';

const dir = realpathSync(tempDir());
const socket = join(dir, 'rootsd.sock');
const config = join(dir, 'mcp-roots.yaml');
mkdirSync(join(dir, 'w', 'base'), { recursive: true });
writeFileSync(config, `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${dir}/w/base\n`);
const env = { ...process.env, HOME: dir };
const daemon = await startDaemon({ config, socket, stateDir: join(dir, 'state') }, env);

/** The server's own start: spawn to the answer to initialize. */
async function coldStart(): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [FS_SERVER, join(dir, 'w', 'base')], {
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  child.stdin.write(
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"0"}}}\n',
  );
  await new Promise((r) => child.stdout.once('data', r));
  const ms = performance.now() - t0;
  child.kill();
  return ms;
}

/** When each 'restarting the server' line reached the bench. */
const restartSeen: number[] = [];
/** Each restart's steps, as the proxy logs them: name to ms. */
const steps: Record<string, number>[] = [];
const transport = new StdioClientTransport({
  command: process.execPath,
  args: proxyArgs(socket, ['{roots}'], SANDBOX ? ['--sandbox'] : []),
  env,
  stderr: 'pipe',
});
transport.stderr?.on('data', (c: Buffer) => {
  const text = c.toString();
  for (const _ of text.matchAll(/restarting the server:/g)) restartSeen.push(performance.now());
  for (const m of text.matchAll(/restarted the server \(ms: ([^)]*)\)/g)) {
    const parts: Record<string, number> = {};
    for (const part of m[1]!.split(', ')) {
      const at = part.lastIndexOf(' ');
      parts[part.slice(0, at)] = Number(part.slice(at + 1));
    }
    steps.push(parts);
  }
});
const host = new Client({ name: 'bench-host', version: '0' });
await host.connect(transport);
const admin = await RootsClient.connect({
  socket,
  env,
  clientInfo: { name: 'bench', version: '0' },
});

const restarts: number[] = [];
const floor: number[] = [];
const decide: number[] = [];
const answer: number[] = [];
/** Each restart less its new server's own start: what the daemon and the proxy add. */
const overhead: number[] = [];
/** The proxy's share of the decision: settling wait and planning. */
const decidedIn: number[] = [];
let ok: boolean;
try {
  for (let i = 0; i < TRIES; i++) {
    floor.push(await coldStart());
    const path = join(dir, 'w', `g${i}`);
    mkdirSync(path);
    const before = restartSeen.length;
    const stepsBefore = steps.length;
    const t0 = performance.now();
    await admin.grant('fs', path, { seconds: 600 });
    // The moment the proxy begins the restart, ask: the call waits for the new server.
    for (let k = 0; restartSeen.length === before; k++) {
      if (k > 4000) throw new Error('no restart within 20 s');
      await new Promise((r) => setTimeout(r, 5));
    }
    const result = await host.callTool({ name: 'list_allowed_directories', arguments: {} });
    const text = (result.content as { text?: string }[]).map((c) => c.text ?? '').join('');
    if (!text.includes(path)) throw new Error(`the answer lacks ${path}: ${text}`);
    const done = performance.now();
    restarts.push(done - t0);
    decide.push(restartSeen[before]! - t0);
    // The steps after the proxy's decision, in sequence (the new server's start runs beside them).
    const s = steps.length > stepsBefore ? steps[stepsBefore]! : {};
    const after = Object.entries(s).filter(
      ([k]) => !k.startsWith('new server start') && k !== 'settle and plan',
    );
    answer.push(done - restartSeen[before]! - after.reduce((a, [, ms]) => a + ms, 0));
    decidedIn.push(s['settle and plan'] ?? 0);
    // The new server's own start: beside the other steps, or after them (sandboxed).
    const ownStart = s['new server start alongside'] ?? s[SEQUENTIAL_START] ?? 0;
    overhead.push(done - t0 - ownStart);
  }
  const r = summary(restarts);
  const f = summary(floor);
  process.stdout.write(
    `  grant to the restarted server's first answer, p50: ${r.p50} ms (the server's own cold start: ${f.p50} ms)\n`,
  );
  const p50 = (xs: number[]) => summary(xs).p50;
  const names = [...new Set(steps.flatMap((s) => Object.keys(s)))];
  const breakdown: [string, number][] = [
    [
      'grant to the proxy hearing of it (the daemon’s push)',
      p50(decide.map((d, i) => d - decidedIn[i]!)),
    ],
    ...names.map((n): [string, number] => [n, p50(steps.map((s) => s[n] ?? 0))]),
    ['the rest (log to bench, the held call answered)', p50(answer)],
  ];
  process.stdout.write(
    `  less the new server's own start (what mcp-rootsd and the proxy add), p50: ${p50(overhead)} ms\n`,
  );
  process.stdout.write('  where the time goes (p50 of each step, ms):\n');
  for (const [what, ms] of breakdown) process.stdout.write(`    ${what}: ${ms}\n`);
  ok = report(
    'restart-latency',
    {
      tries: TRIES,
      sandboxed: SANDBOX,
      restart: r,
      coldStart: f,
      addedP50: p50(overhead),
      breakdown,
    },
    [['restart to first answer p50 < 1000 ms', r.p50 < 1000]],
  );
} finally {
  await host.close();
  await admin.close();
  daemon.kill();
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = ok ? 0 : 1;
