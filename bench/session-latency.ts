/**
 * Whether the session keeps answering while a call is checked: a 2025-era host (SDK v1 Client)
 * in front of the built proxy and the reference filesystem server sends `read_multiple_files` of
 * 250 paths about 1 KB deep whose components are missing (the most one call may hold), and pings
 * one after another until that call is answered. Beside it, in the same run and alternating with
 * the calls, pings with the proxy idle. Target: busy ping p50 within 5 ms of idle p50.
 */
import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { proxyArgs, report, startDaemon, summary, tempDir } from './common.js';

const CALLS = Number(process.env.CALLS ?? 10);
const PATHS = 250;
const SLACK_MS = 5;

const dir = realpathSync(tempDir());
const root = join(dir, 'w');
mkdirSync(root);
const config = join(dir, 'mcp-roots.yaml');
const socket = join(dir, 'rootsd.sock');
writeFileSync(config, `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${root}\n`);
const env = { ...process.env, HOME: dir };
const daemon = await startDaemon({ config, socket, stateDir: join(dir, 'state') }, env);
const transport = new StdioClientTransport({
  command: process.execPath,
  args: proxyArgs(socket),
  env,
  stderr: 'ignore',
});
const host = new Client({ name: 'bench-host', version: '0' });
await host.connect(transport);

const paths = Array.from({ length: PATHS }, (_, i) => `${root}/${'a/'.repeat(500)}${i}`);
const timePing = async (): Promise<number> => {
  const t0 = performance.now();
  await host.ping();
  return performance.now() - t0;
};
const text = (r: Record<string, unknown>): string =>
  ((r.content ?? []) as { text?: string }[]).map((c) => c.text ?? '').join('\n');

let ok: boolean;
try {
  // The server has its roots, and the proxy its tools, before anything is measured.
  for (;;) {
    const r = await host.callTool({ name: 'list_allowed_directories', arguments: {} });
    if (text(r).includes(root)) break;
  }
  for (let i = 0; i < 50; i++) await timePing();

  const idle: number[] = [];
  const busy: number[] = [];
  const callMs: number[] = [];
  let refused = 0;
  for (let c = 0; c < CALLS; c++) {
    let answered = false;
    const t0 = performance.now();
    const call = host
      .callTool({ name: 'read_multiple_files', arguments: { paths } }, undefined, {
        timeout: 120_000,
      })
      .then((r) => {
        answered = true;
        callMs.push(performance.now() - t0);
        return r;
      });
    let during = 0;
    while (!answered) {
      const ms = await timePing();
      // A ping answered after the call was is not one the check could have held up.
      if (!answered) {
        busy.push(ms);
        during++;
      }
    }
    if (text(await call).includes('mcp-roots-proxy refused')) refused++;
    // As many idle pings, right after: the same machine, the same moment.
    for (let i = 0; i < Math.min(Math.max(during, 5), 200); i++) idle.push(await timePing());
  }
  const idleStats = summary(idle);
  const busyStats = summary(busy);
  const callStats = summary(callMs);
  ok = report(
    'session-latency',
    { paths: PATHS, calls: CALLS, idleMs: idleStats, busyMs: busyStats, callMs: callStats },
    [
      [
        `ping p50 during a check ${busyStats.p50} ms ≤ idle p50 ${idleStats.p50} ms + ${SLACK_MS} ms`,
        busyStats.n > 0 && busyStats.p50 <= idleStats.p50 + SLACK_MS,
      ],
      [
        `${busyStats.n} pings answered while ${CALLS} calls were checked (each took p50 ${callStats.p50} ms: what a ping waited before)`,
        busyStats.n >= CALLS,
      ],
      ['every call was allowed (each check ran to the end)', refused === 0],
    ],
  );
} finally {
  await host.close();
  daemon.kill();
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = ok ? 0 : 1;
