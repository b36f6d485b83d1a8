/**
 * What the proxy adds to a tool call: a 2025-era host (SDK v1 Client) calls the reference
 * filesystem server through the built proxy, and a second host calls a second copy of the same
 * server directly, given the same root, the calls alternating one by one (`CALLS`, default 2,000
 * of each after 200 warm-ups). One tool with a path the proxy checks with the daemon
 * (`get_file_info`), one without (`list_allowed_directories`). Target: the proxy adds at most
 * 0.3 ms at p50 to the call with a path.
 *
 * Beside them, in the same turns, the bench's own `roots/check` of the same path straight to the
 * daemon (the question the proxy asks before it relays the call): what share of the difference
 * is the daemon's answer, and what is the proxy's own work and its two extra pipe hops. And the
 * CPU time the proxy spends per call and the daemon per `roots/check` (from `/proc`), figures a
 * loaded machine moves far less than it moves times.
 */
import { mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { RootsClient } from '../protocol/client.js';
import { FS_SERVER, proxyArgs, report, startDaemon, summary, tempDir } from './common.js';

const CALLS = Number(process.env.CALLS ?? 2000);
const WARMUP = 200;
const TARGET_MS = 0.3;

const dir = realpathSync(tempDir());
const root = join(dir, 'w');
mkdirSync(root);
const file = join(root, 'f.txt');
writeFileSync(file, 'x\n');
const config = join(dir, 'mcp-roots.yaml');
const socket = join(dir, 'rootsd.sock');
writeFileSync(config, `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${root}\n`);
const env = { ...process.env, HOME: dir };
const daemon = await startDaemon({ config, socket, stateDir: join(dir, 'state') }, env);

const hostPids = new Map<Client, number | null>();
async function host(args: string[]): Promise<Client> {
  const c = new Client({ name: 'bench-host', version: '0' });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    env,
    stderr: 'ignore',
  });
  await c.connect(transport);
  hostPids.set(c, transport.pid);
  return c;
}

/** CPU time (user + system) a process has used, in ms; NaN when it cannot be read. */
function cpuMs(pid: number | null | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    // utime and stime, in clock ticks of 10 ms (Linux's USER_HZ).
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}
// BENCH_NODE_ARGS (say `--cpu-prof --cpu-prof-dir=/tmp/p`) profiles the proxy too.
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
const proxied = await host([...nodeArgs, ...proxyArgs(socket)]);
const direct = await host([FS_SERVER, root]);
const daemonClient = await RootsClient.connect({
  socket,
  env,
  clientInfo: { name: 'bench', version: '0' },
});
/** The daemon's answer to the proxy's question, asked from here. */
const timeCheck = async (): Promise<number> => {
  const t0 = performance.now();
  const r = await daemonClient.check('fs', file, 'read', { tool: 'get_file_info' });
  const ms = performance.now() - t0;
  if (!r.allowed) throw new Error(`roots/check refused ${file}: ${r.reason}`);
  return ms;
};

const text = (r: Record<string, unknown>): string =>
  ((r.content ?? []) as { text?: string }[]).map((c) => c.text ?? '').join('\n');
const timeCall = async (c: Client, name: string, args: Record<string, unknown>) => {
  const t0 = performance.now();
  const r = await c.callTool({ name, arguments: args });
  const ms = performance.now() - t0;
  if (r.isError) throw new Error(`${name} failed: ${text(r)}`);
  return ms;
};

let ok: boolean;
try {
  // The proxied server has its roots (from the daemon) before anything is measured.
  for (;;) {
    const r = await proxied.callTool({ name: 'list_allowed_directories', arguments: {} });
    if (text(r).includes(root)) break;
  }
  const figures: Record<string, { proxied: number[]; direct: number[] }> = {};
  const checkMs: number[] = [];
  /** CPU µs per call: the proxy's for each tool, the daemon's per roots/check. */
  const cpu: Record<string, number> = {};
  const proxyPid = hostPids.get(proxied);
  for (const [name, args] of [
    ['get_file_info', { path: file }],
    ['list_allowed_directories', {}],
  ] as const) {
    const f = (figures[name] = { proxied: [] as number[], direct: [] as number[] });
    const [proxyBefore, daemonBefore] = [cpuMs(proxyPid), cpuMs(daemon.pid)];
    for (let i = 0; i < WARMUP + CALLS; i++) {
      // Alternating call by call: both see the same moment of a shared machine.
      const p = await timeCall(proxied, name, args);
      const d = await timeCall(direct, name, args);
      const c = name === 'get_file_info' ? await timeCheck() : undefined;
      if (i >= WARMUP) {
        f.proxied.push(p);
        f.direct.push(d);
        if (c !== undefined) checkMs.push(c);
      }
    }
    const n = WARMUP + CALLS;
    cpu[`proxyUsPerCall_${name}`] = Math.round(((cpuMs(proxyPid) - proxyBefore) * 1000) / n);
    // Two checks per turn: the proxy's, and the bench's own.
    if (name === 'get_file_info')
      cpu.daemonUsPerCheck = Math.round(((cpuMs(daemon.pid) - daemonBefore) * 1000) / (2 * n));
  }
  const withPath = figures.get_file_info!;
  const noPath = figures.list_allowed_directories!;
  const p = summary(withPath.proxied);
  const d = summary(withPath.direct);
  const np = summary(noPath.proxied);
  const nd = summary(noPath.direct);
  const check = summary(checkMs);
  const added = Number((p.p50 - d.p50).toFixed(3));
  ok = report(
    'proxy-overhead',
    {
      calls: CALLS,
      pathCallProxiedMs: p,
      pathCallDirectMs: d,
      noPathCallProxiedMs: np,
      noPathCallDirectMs: nd,
      daemonCheckMs: check,
      cpu,
    },
    [
      [
        `a call with a path through the proxy p50 ${p.p50} ms, straight to the server ${d.p50} ms: adds ${added} ms <= ${TARGET_MS} ms (without a path: ${np.p50} vs ${nd.p50} ms; the daemon's roots/check alone ${check.p50} ms; CPU per call: proxy ${cpu.proxyUsPerCall_get_file_info} µs with a path, ${cpu.proxyUsPerCall_list_allowed_directories} µs without, daemon ${cpu.daemonUsPerCheck} µs per check)`,
        added <= TARGET_MS,
      ],
    ],
  );
} finally {
  await proxied.close();
  await direct.close();
  await daemonClient.close();
  daemon.kill();
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = ok ? 0 : 1;
