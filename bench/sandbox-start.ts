/**
 * What `--sandbox` adds to a server's start: from the proxy's decision to start (laying out the
 * mounts included) to the server's first answer, for the same stdio server started directly and
 * under bubblewrap, interleaved try by try. Target: the sandbox adds < 50 ms at p50.
 *
 * The breakdown splits each start into planning (for the sandbox: reading the system's layout,
 * the roots' denied paths and the program's files) and spawn to first answer (for the sandbox:
 * bwrap's namespaces and mounts, the gate's check of them, then the same server).
 */
import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Root } from '../common/types.js';
import { planLaunch, type PlanInput } from '../proxy/launch-plan.js';
import { closeInheritedDescriptors } from '../proxy/inherited-fds.js';
import { makeProxyLogger } from '../proxy/log.js';
import { probeSandbox } from '../proxy/sandbox-probe.js';
import { startServerProcess } from '../proxy/server-process.js';
import { report, summary, tempDir } from './common.js';

const TRIES = Number(process.env.TRIES ?? 40);

// The smallest stdio MCP server: it answers initialize, so the figure is start-up cost only.
const dir = realpathSync(tempDir());
const server = join(dir, 'server.mjs');
writeFileSync(
  server,
  `process.stdin.on('data', (c) => { const m = JSON.parse(String(c).split('\\n')[0]);
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} }) + '\\n'); process.exit(0); });\n`,
);
const roots: Root[] = [];
const log = makeProxyLogger('bench', 'warn');
// As the proxy does first: what started this process may have left descriptors open, and the
// gate refuses a sandbox they would pass into.
closeInheritedDescriptors();
for (const name of ['a', 'b', 'c']) {
  mkdirSync(join(dir, 'w', name), { recursive: true });
  roots.push({
    uri: pathToFileURL(join(dir, 'w', name)).href,
    _meta: {
      'mcp-roots/readOnly': name === 'c',
      'mcp-roots/deny': [{ pattern: '**/.env', access: 'all' }],
    },
  });
}

const support = await probeSandbox(process.env);
if (!support.ok) {
  process.stdout.write(`cannot measure: ${support.reason}\n`);
  process.exit(1);
}
const input = (sandbox: boolean): PlanInput => ({
  options: {
    server: 'bench',
    sandbox,
    env: [],
    cwd: undefined,
    command: process.execPath,
    args: [server, '{roots}'],
  },
  roots,
  launch: undefined,
  sandbox: undefined,
  writers: [],
  env: process.env,
  home: homedir(),
  cwd: process.cwd(),
  daemonSocket: undefined,
  sandboxSupport: () => Promise.resolve(support),
});

/** The planning part of each try, by kind. */
const planMs: Record<'plain' | 'boxed', number[]> = { plain: [], boxed: [] };

/** From planning to the first answer, in ms. */
async function once(sandbox: boolean): Promise<number> {
  const t0 = performance.now();
  const plan = await planLaunch(input(sandbox));
  if (plan.kind !== 'start') throw new Error(`not started: ${plan.reason}`);
  planMs[sandbox ? 'boxed' : 'plain'].push(performance.now() - t0);
  // As the proxy starts it: a sandbox through its gate, which checks the mounts and the open
  // descriptors before the server runs (a bare spawn of bwrap's arguments lacks the gate's pipes).
  const child = await startServerProcess(plan.spawn, log);
  if ('failed' in child) throw new Error(`not started: ${child.reason}`);
  child.serverIn.write('{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}\n');
  await new Promise<void>((resolve, reject) => {
    child.serverOut.once('data', () => resolve());
    void child.status.then((code) => reject(new Error(`exited with ${code} before answering`)));
  });
  const ms = performance.now() - t0;
  await child.status;
  return ms;
}

const plain: number[] = [];
const boxed: number[] = [];
await once(false);
await once(true);
planMs.plain = [];
planMs.boxed = [];
for (let i = 0; i < TRIES; i++) {
  plain.push(await once(false));
  boxed.push(await once(true));
}
rmSync(dir, { recursive: true, force: true });
const p = summary(plain);
const b = summary(boxed);
const added = Math.round((b.p50 - p.p50) * 1000) / 1000;
process.stdout.write(
  `  start to first answer, p50: ${p.p50} ms unsandboxed, ${b.p50} ms under bwrap (+${added} ms)\n`,
);
const pp = summary(planMs.plain).p50;
const bp = summary(planMs.boxed).p50;
const spawnP50 = (total: number[], plans: number[]) =>
  summary(total.map((t, i) => t - plans[i]!)).p50;
const breakdown = {
  planUnsandboxed: pp,
  planSandboxed: bp,
  spawnToAnswerUnsandboxed: spawnP50(plain, planMs.plain),
  spawnToAnswerSandboxed: spawnP50(boxed, planMs.boxed),
};
process.stdout.write(
  `  where the time goes (p50, ms): planning ${pp} unsandboxed, ${bp} sandboxed; spawn to first answer ${breakdown.spawnToAnswerUnsandboxed} unsandboxed, ${breakdown.spawnToAnswerSandboxed} under bwrap\n`,
);
const ok = report(
  'sandbox-start',
  { tries: TRIES, unsandboxed: p, sandboxed: b, addedP50: added, breakdown },
  [['bwrap adds < 50 ms at p50', added < 50]],
);
process.exitCode = ok ? 0 : 1;
