/**
 * A `dir/*` glob over 100,000 entries (`BIG_ENTRIES`): from the daemon's start to the first
 * answer listing them all, beside a bare `readdir` of the same directory (the floor, same run);
 * then a reload after one entry is added: from its `mkdir` to the subscriber's `list_changed`,
 * which re-expands only the changed entry of the glob's base, not the whole policy.
 * Targets: start <= 1.5 s, one-entry reload <= 200 ms.
 */
import { mkdirSync, readdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { RootsClient } from '../protocol/client.js';
import type { ListChangedParams } from '../protocol/methods.js';
import { makeDirTree, report, startTreeDaemon, summary, tempDir } from './common.js';

const ENTRIES = Number(process.env.BIG_ENTRIES ?? 100_000);
const RELOADS = Number(process.env.BIG_RELOADS ?? 10);
const START_TARGET_MS = 1500;
const RELOAD_TARGET_MS = 200;

const dir = realpathSync(tempDir());
const socket = join(dir, 'rootsd.sock');
const config = join(dir, 'mcp-roots.yaml');
const big = join(dir, 'big');
makeDirTree(big, ENTRIES, { prefix: 'e' });
writeFileSync(config, `version: 1\nservers:\n  big:\n    roots:\n      - path: ${big}/*\n`);
const env = { ...process.env, HOME: dir };

const r0 = performance.now();
const floorEntries = readdirSync(big, { withFileTypes: true }).filter((e) => e.isDirectory());
const floorMs = performance.now() - r0;

let ok: boolean;
const started = performance.now();
const daemon = await startTreeDaemon({ dir, config, socket, logVar: 'BIG_LOG' }, env, 600_000);
try {
  const c = await RootsClient.connect({ socket, env, clientInfo: { name: 'bench', version: '0' } });
  const first = await c.request(
    'roots/list',
    { server: 'big', subscribe: true },
    { timeoutMs: 600_000 },
  );
  const startMs = performance.now() - started;
  const reloads: number[] = [];
  for (let i = 0; i < RELOADS; i++) {
    const path = join(big, `new${i}`);
    const uri = pathToFileURL(path).href;
    const seen = new Promise<number>((resolve) => {
      const on = (p: ListChangedParams) => {
        if (!p.roots.some((r) => r.uri === uri)) return;
        c.off('list_changed', on);
        resolve(performance.now());
      };
      c.on('list_changed', on);
    });
    const t0 = performance.now();
    mkdirSync(path);
    const took = (await seen) - t0;
    reloads.push(took);
    // Each reload is a leading edge: past the root's recompute gap (twice the last recompute,
    // which on a loaded machine can be longer than a second; the reload took longer still).
    await new Promise((r) => setTimeout(r, Math.max(1000, 3 * took)));
  }
  await c.close();
  const reload = summary(reloads);
  ok = report(
    'big-glob',
    {
      entries: ENTRIES,
      firstListRoots: first.roots.length,
      startMs: Math.round(startMs),
      bareReaddirMs: Math.round(floorMs),
      bareReaddirEntries: floorEntries.length,
      reloadMs: reload,
    },
    [
      [
        `dir/* over ${ENTRIES} entries: start to first answer ${Math.round(startMs)} ms (bare readdir ${Math.round(floorMs)} ms) <= ${START_TARGET_MS} ms`,
        startMs <= START_TARGET_MS && first.roots.length === ENTRIES,
      ],
      [
        `one entry added -> list_changed p50 ${reload.p50} ms (max ${reload.max}, ${reload.n} reloads) <= ${RELOAD_TARGET_MS} ms`,
        reload.p50 <= RELOAD_TARGET_MS,
      ],
    ],
  );
} finally {
  daemon.kill('SIGTERM');
  await new Promise((r) => daemon.once('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = ok ? 0 : 1;
