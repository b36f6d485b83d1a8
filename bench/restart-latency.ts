/**
 * From a grant to the first answer of the restarted server: the reference filesystem server is
 * started as `{roots}` behind the built proxy, a 2025-era host (SDK v1 Client) calls
 * `list_allowed_directories` as soon as the proxy starts the restart, and that call, held during
 * the restart, is answered by the new server. Beside it, the floor: the same server's own cold
 * start to its first answer. Target: p50 < 1 s.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { RootsClient } from '../protocol/client.js';
import { dist, report, ROOT, startDaemon, summary, tempDir } from './common.js';

const TRIES = Number(process.env.TRIES ?? 15);
const FS_SERVER = join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');

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

let stderr = '';
const transport = new StdioClientTransport({
  command: process.execPath,
  args: [
    dist('proxy/main.js'),
    '--server',
    'fs',
    '--socket',
    socket,
    '--',
    process.execPath,
    FS_SERVER,
    '{roots}',
  ],
  env,
  stderr: 'pipe',
});
transport.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
const host = new Client({ name: 'bench-host', version: '0' });
await host.connect(transport);
const admin = await RootsClient.connect({
  socket,
  env,
  clientInfo: { name: 'bench', version: '0' },
});

const restarts: number[] = [];
const floor: number[] = [];
let ok: boolean;
try {
  for (let i = 0; i < TRIES; i++) {
    floor.push(await coldStart());
    const path = join(dir, 'w', `g${i}`);
    mkdirSync(path);
    const before = stderr.split('restarting the server').length;
    const t0 = performance.now();
    await admin.grant('fs', path, { seconds: 600 });
    // The moment the proxy begins the restart, ask: the call waits for the new server.
    for (let k = 0; stderr.split('restarting the server').length === before; k++) {
      if (k > 1000) throw new Error('no restart within 20 s');
      await new Promise((r) => setTimeout(r, 20));
    }
    const result = await host.callTool({ name: 'list_allowed_directories', arguments: {} });
    const text = (result.content as { text?: string }[]).map((c) => c.text ?? '').join('');
    if (!text.includes(path)) throw new Error(`the answer lacks ${path}: ${text}`);
    restarts.push(performance.now() - t0);
  }
  const r = summary(restarts);
  const f = summary(floor);
  process.stdout.write(
    `  grant to the restarted server's first answer, p50: ${r.p50} ms (the server's own cold start: ${f.p50} ms)\n`,
  );
  ok = report('restart-latency', { tries: TRIES, restart: r, coldStart: f }, [
    ['restart to first answer p50 < 1000 ms', r.p50 < 1000],
  ]);
} finally {
  await host.close();
  await admin.close();
  daemon.kill();
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = ok ? 0 : 1;
