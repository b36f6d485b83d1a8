/**
 * Memory of an idle mcp-rootsd with a one-line policy (target: at most 50 MB resident), then with
 * 1,000 clients connected and subscribed (target: at most 70 MB). Floors measured in the same run:
 * a bare Node process; a Node ES module that loads the same built-in modules as the daemon and
 * idles (what Node itself costs before any of the daemon's code); and, for the clients, a bare
 * line-JSON server (bench/echo-server.ts) holding the same 1,000 connections. bench/FINDINGS.md says
 * where the rest goes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { RootsClient } from '../protocol/client.js';
import { asDaemonStarts, dist, report, startDaemon, startNode, tempDir } from './common.js';

const TARGET_MB = 50;
const CLIENTS_TARGET_MB = 70;
const CLIENTS = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);

/** The built-in modules the built daemon imports (its bundle's `node:` imports), then idle. */
const BUILTINS = ['path', 'fs', 'fs/promises', 'crypto', 'net', 'events', 'util', 'os', 'url'];
const IDLE = 'setInterval(() => {}, 1 << 30);';

/** Resident memory of a process in MB (VmRSS). */
function rssMb(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Sample each process ten times over a second and keep the last (memory only grows at start). */
async function settle(pids: number[]): Promise<number[]> {
  let last: number[] = [];
  for (let i = 0; i < 10; i++) {
    await new Promise((r) => setTimeout(r, 100));
    last = pids.map(rssMb);
  }
  return last;
}

/** `CLIENTS` connections subscribed to `socket`, held open by one process until killed. */
async function subscribe(socket: string): Promise<ChildProcess> {
  const subscribers = spawn(
    process.execPath,
    [dist('bench/subscribers.js'), socket, `${CLIENTS}`],
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
  return subscribers;
}

const load = () => loadavg()[0]!.toFixed(1);
const loadBefore = load();
const dir = tempDir();
const socket = join(dir, 'rootsd.sock');
const config = join(dir, 'mcp-roots.yaml');
writeFileSync(config, 'version: 1\n');
const daemon = await startDaemon({ config, socket, stateDir: join(dir, 'state') });
// Ask once, so the daemon has served a client (its protocol code is loaded), then let it idle.
const client = await RootsClient.connect({ socket });
await client.status();
await client.close();

// The floors start as the daemon does, without the certificates Node 20 would parse.
const floorEnv = asDaemonStarts(process.env);
const bare = spawn(process.execPath, ['-e', IDLE], { stdio: 'ignore', env: floorEnv });
const imports = BUILTINS.map((m) => `import 'node:${m}';`).join(' ');
const builtins = spawn(process.execPath, ['--input-type=module', '-e', `${imports} ${IDLE}`], {
  stdio: 'ignore',
  env: floorEnv,
});
await Promise.all([bare, builtins].map((p) => new Promise((r) => p.once('spawn', r))));
const [daemonMb, bareMb, builtinsMb] = await settle([daemon.pid!, bare.pid!, builtins.pid!]);
bare.kill();
builtins.kill();

const subscribers = await subscribe(socket);
const [clientsMb] = await settle([daemon.pid!]);
subscribers.kill();
daemon.kill();

// The floor for the clients: a bare line-JSON server answering the same subscriptions.
const payload = join(dir, 'payload.json');
writeFileSync(payload, '{"roots":[]}');
const echoSocket = join(dir, 'echo.sock');
const echo = await startNode(
  [dist('bench/echo-server.js'), echoSocket, payload],
  () => existsSync(echoSocket),
  floorEnv,
);
const echoSubscribers = await subscribe(echoSocket);
const [echoMb] = await settle([echo.pid!]);
echoSubscribers.kill();
echo.kill();

const mb = (x: number | undefined) => `${(x ?? NaN).toFixed(1)} MB`;
process.stdout.write(
  [
    `  load average ${loadBefore} at the start, ${load()} at the end`,
    `  idle mcp-rootsd, one-line policy          ${mb(daemonMb)} RSS`,
    `    floor: node -e (bare, idle)             ${mb(bareMb)}`,
    `    floor: node, the daemon's built-ins     ${mb(builtinsMb)}`,
    `  mcp-rootsd, ${CLIENTS} clients subscribed      ${mb(clientsMb)} RSS`,
    `    floor: line-JSON server, same clients   ${mb(echoMb)}`,
    '',
  ].join('\n'),
);
const ok = report(
  'daemon-rss',
  { daemonMb, bareMb, builtinsMb, clientsMb, echoMb, clients: CLIENTS },
  [
    [
      `idle daemon ${mb(daemonMb)} RSS beside bare node ${mb(bareMb)} and node with its built-ins ${mb(builtinsMb)}; target <= ${TARGET_MB} MB`,
      daemonMb! <= TARGET_MB,
    ],
    [
      `${CLIENTS} subscribed clients ${mb(clientsMb)} RSS beside a bare line-JSON server with them ${mb(echoMb)}; target <= ${CLIENTS_TARGET_MB} MB`,
      clientsMb! <= CLIENTS_TARGET_MB,
    ],
  ],
);
process.exitCode = ok ? 0 : 1;
