/**
 * Memory of an idle mcp-rootsd with a one-line policy, beside a bare Node process measured in the
 * same run (target: at most 50 MB resident), then with 1,000 clients connected and subscribed
 * (target: at most 70 MB). bench/README.md says where the memory goes.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RootsClient } from '../protocol/client.js';
import { dist, report, startDaemon, tempDir } from './common.js';

const TARGET_MB = 50;
const CLIENTS_TARGET_MB = 70;
const CLIENTS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);

/** Resident memory of a process in MB (VmRSS). */
function rssMb(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const dir = tempDir();
const socket = join(dir, 'rootsd.sock');
const config = join(dir, 'mcp-roots.yaml');
writeFileSync(config, 'version: 1\n');
const daemon = await startDaemon({ config, socket, stateDir: join(dir, 'state') });
// Ask once, so the daemon has served a client (its protocol code is loaded), then let it idle.
const client = await RootsClient.connect({ socket });
await client.status();
await client.close();

const bare = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1 << 30)'], { stdio: 'ignore' });
await new Promise((r) => bare.once('spawn', r));
// Both settle: sample a few times over a second and keep the last (memory only grows at start).
let daemonMb = 0;
let bareMb = 0;
for (let i = 0; i < 10; i++) {
  await new Promise((r) => setTimeout(r, 100));
  daemonMb = rssMb(daemon.pid!);
  bareMb = rssMb(bare.pid!);
}
bare.kill();

// 1,000 clients, each subscribed to a server's list, held open while the daemon is sampled.
const subscribers = spawn(
  process.execPath,
  [dist('bench/subscribers.js'), socket, String(CLIENTS)],
  {
    stdio: ['pipe', 'pipe', 'inherit'],
  },
);
await new Promise<void>((resolve, reject) => {
  subscribers.stdout.on('data', (chunk: Buffer) => {
    if (chunk.toString().includes('ready')) resolve();
  });
  subscribers.once('exit', (code) => reject(new Error(`subscribers exited ${String(code)}`)));
});
let clientsMb = 0;
for (let i = 0; i < 10; i++) {
  await new Promise((r) => setTimeout(r, 100));
  clientsMb = rssMb(daemon.pid!);
}
subscribers.kill();
daemon.kill();
process.stdout.write(
  `  idle mcp-rootsd, one-line policy  ${daemonMb.toFixed(1)} MB RSS\n  node -e (bare, idle)              ${bareMb.toFixed(1)} MB RSS\n  ${CLIENTS} clients subscribed        ${clientsMb.toFixed(1)} MB RSS\n`,
);
const ok = report('daemon-rss', { daemonMb, bareMb, clientsMb, clients: CLIENTS }, [
  [
    `idle daemon ${daemonMb.toFixed(1)} MB RSS (bare node ${bareMb.toFixed(1)} MB); target <= ${TARGET_MB} MB`,
    daemonMb <= TARGET_MB,
  ],
  [
    `${CLIENTS} subscribed clients ${clientsMb.toFixed(1)} MB RSS; target <= ${CLIENTS_TARGET_MB} MB`,
    clientsMb <= CLIENTS_TARGET_MB,
  ],
]);
process.exitCode = ok ? 0 : 1;
