/**
 * Resident memory of the daemon under churn: for `CHURN_SECONDS` (default 30; 300 is the
 * five-minute figure) connections come and go (each subscribes, lists and closes), grants are
 * added and revoked, the policy file is edited, and directories are made and removed under its
 * globs, all at once. The daemon's RSS is sampled every second. Beside it, in the same run, the
 * same daemon's RSS once started and idle (the floor). Targets: the plateau (median of the last
 * half) <= 70 MB, and flat: the last quarter's median within 5 MB of the third quarter's.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { RootsClient } from '../protocol/client.js';
import { makeDirTree, report, startTreeDaemon, tempDir } from './common.js';

const SECONDS = Number(process.env.CHURN_SECONDS ?? 30);
const PLATEAU_TARGET_MB = 70;
const FLAT_MB = 5;
/** Connections open at once; each is replaced as soon as it has listed. */
const CONNECTIONS = Number(process.env.CHURN_CONNECTIONS ?? 20);
const SERVERS = 20;
const FOLDERS = 500;

function rssMb(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)]!;
};
const mb = (x: number) => Math.round(x * 10) / 10;

const dir = tempDir();
const socket = join(dir, 'rootsd.sock');
const config = join(dir, 'mcp-roots.yaml');
const tree = join(dir, 'tree');
makeDirTree(tree, FOLDERS, { prefix: 'd', perGroup: 50, groupPrefix: 'g' });
mkdirSync(join(dir, 'grants'), { recursive: true });

/** The policy, `edit` changing one server's rules so that each edit is a real change. */
function policy(edit: number): string {
  const lines = ['version: 1', 'deny:', '  - "**/.env"', 'servers:'];
  for (let s = 0; s < SERVERS; s++) {
    lines.push(`  s${s}:`, '    roots:');
    lines.push(`      - path: ${tree}/g${s % 10}/*`);
    lines.push(`      - {path: ${tree}/g${(s + 1) % 10}/d${(s * 7) % 50}, readOnly: true}`);
    if (s === edit % SERVERS) lines.push(`      - path: ${tree}/g${(edit + 3) % 10}/d${edit % 50}`);
  }
  return `${lines.join('\n')}\n`;
}
writeFileSync(config, policy(0));
const env = { ...process.env, HOME: dir };
const daemon = await startTreeDaemon({ dir, config, socket, logVar: 'CHURN_LOG' }, env, 60_000);
const pid = daemon.pid!;
const load = () => loadavg()[0]!.toFixed(1);
const loadBefore = load();

let ok: boolean;
try {
  // The floor: the same daemon, started, asked once, then idle for two seconds.
  const first = await RootsClient.connect({ socket, env });
  await first.listRoots('s0');
  await first.close();
  await new Promise((r) => setTimeout(r, 2000));
  const idleMb = rssMb(pid);

  const samples: number[] = [];
  const counts = { connections: 0, grants: 0, edits: 0, dirs: 0, errors: 0 };
  const until = performance.now() + SECONDS * 1000;
  const running = () => performance.now() < until;
  const sampler = setInterval(() => samples.push(rssMb(pid)), 1000);

  const connections = async (lane: number) => {
    while (running()) {
      try {
        const c = await RootsClient.connect({ socket, env });
        await c.listRoots(`s${(lane + counts.connections) % SERVERS}`, { subscribe: true });
        await c.check(`s${lane % SERVERS}`, join(tree, 'g0', 'd1', 'x'), 'read');
        await c.close();
        counts.connections++;
      } catch {
        counts.errors++;
      }
    }
  };
  const grants = async () => {
    const c = await RootsClient.connect({ socket, env });
    for (let i = 0; running(); i++) {
      const server = `s${i % SERVERS}`;
      try {
        await c.grant(server, join(tree, `g${i % 10}`, `d${(i * 13) % 50}`), { seconds: 600 });
        await c.revoke(server);
        counts.grants++;
      } catch {
        counts.errors++;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    await c.close();
  };
  const edits = async () => {
    for (let i = 1; running(); i++) {
      // Written whole and renamed into place, as editors save: each edit is a valid policy.
      writeFileSync(`${config}.tmp`, policy(i));
      renameSync(`${config}.tmp`, config);
      counts.edits++;
      await new Promise((r) => setTimeout(r, 300));
    }
  };
  const dirs = async () => {
    for (let i = 0; running(); i++) {
      const path = join(tree, `g${i % 10}`, `churn${i % 200}`);
      if (i % 400 < 200) mkdirSync(path, { recursive: true });
      else rmSync(path, { recursive: true, force: true });
      counts.dirs++;
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  await Promise.all([
    ...Array.from({ length: CONNECTIONS }, (_, lane) => connections(lane)),
    grants(),
    edits(),
    dirs(),
  ]);
  clearInterval(sampler);
  const half = samples.slice(Math.floor(samples.length / 2));
  const third = samples.slice(Math.floor(samples.length / 2), Math.floor((samples.length * 3) / 4));
  const fourth = samples.slice(Math.floor((samples.length * 3) / 4));
  const plateau = median(half);
  const drift = median(fourth) - median(third);
  const stillAlive = daemon.exitCode === null;
  ok = report(
    'churn-rss',
    {
      seconds: SECONDS,
      load: `${loadBefore} -> ${load()}`,
      idleMb: mb(idleMb),
      plateauMb: mb(plateau),
      peakMb: mb(Math.max(...samples)),
      driftMb: mb(drift),
      samplesMb: samples.map(mb),
      ...counts,
    },
    [
      [
        `RSS under ${SECONDS} s of churn: plateau ${mb(plateau)} MB (idle, same daemon: ${mb(idleMb)} MB; peak ${mb(Math.max(...samples))} MB) <= ${PLATEAU_TARGET_MB} MB`,
        plateau <= PLATEAU_TARGET_MB,
      ],
      [
        `flat: last quarter's median ${mb(drift) >= 0 ? '+' : ''}${mb(drift)} MB from the third quarter's (within ${FLAT_MB} MB)`,
        Math.abs(drift) <= FLAT_MB,
      ],
      [
        `the daemon is still running, every request answered (${counts.errors} errors)`,
        stillAlive && counts.errors === 0,
      ],
    ],
  );
} finally {
  daemon.kill('SIGTERM');
  await new Promise((r) => daemon.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = ok ? 0 : 1;
