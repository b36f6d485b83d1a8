/**
 * Memory of an idle mcp-rootsd with a one-line policy, beside a bare Node process measured in the
 * same run. Target: at most 50 MB resident. The policy schema's validator is compiled at build
 * time, so the daemon does not load ajv and compile the schema at start.
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RootsClient } from '../protocol/client.js';
import { report, startDaemon, tempDir } from './common.js';

const TARGET_MB = 50;

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
daemon.kill();
bare.kill();
process.stdout.write(
  `  idle mcp-rootsd, one-line policy  ${daemonMb.toFixed(1)} MB RSS\n  node -e (bare, idle)              ${bareMb.toFixed(1)} MB RSS\n`,
);
const ok = report('daemon-rss', { daemonMb, bareMb }, [
  [
    `idle daemon ${daemonMb.toFixed(1)} MB RSS (bare node ${bareMb.toFixed(1)} MB); target <= ${TARGET_MB} MB`,
    daemonMb <= TARGET_MB,
  ],
]);
process.exitCode = ok ? 0 : 1;
