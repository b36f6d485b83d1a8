/**
 * Resolving 1,000 servers x 10 rules over 10,000 directories (globs included), beside a bare
 * walk making the same filesystem calls (`bare-walk.ts`), the two taken in turns in one run.
 * Target: resolve p50 <= 2x the bare walk's p50.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAndResolve, loadPolicySources, nodeFs, resolvePolicy } from '../policies/index.js';
import { recordingFs, replay, type Call } from './bare-walk.js';
import { report, summary, tempDir } from './common.js';

const SERVERS = 1000;
const GROUPS = 100;
const PER_GROUP = 100;
const RUNS = Number(process.env.RESOLVE_RUNS ?? 7);
const RATIO_TARGET = 2;

const dir = tempDir();
try {
  for (let g = 0; g < GROUPS; g++) {
    for (let d = 0; d < PER_GROUP; d++)
      mkdirSync(join(dir, 'tree', `g${g}`, `d${d}`), { recursive: true });
  }
  const lines = ['version: 1', 'deny:', `  - ${dir}/tree/g0/d0`, '  - "**/.env"', 'servers:'];
  for (let s = 0; s < SERVERS; s++) {
    const g = s % GROUPS;
    lines.push(`  server-${s}:`, '    roots:');
    for (let r = 0; r < 7; r++)
      lines.push(`      - path: ${dir}/tree/g${(g + r) % GROUPS}/d${(s + r) % PER_GROUP}`);
    lines.push(`      - {path: ${dir}/tree/g${g}/*, readOnly: true}`);
    lines.push(`      - {path: "${dir}/tree/g${(g + 1) % GROUPS}/d{1,2,3}"}`);
    lines.push(
      `      - {path: ${dir}/tree/g${(g + 2) % GROUPS}/**/d7, expires: 2099-01-01T00:00:00Z}`,
    );
  }
  const file = join(dir, 'policy.yaml');
  writeFileSync(file, `${lines.join('\n')}\n`);
  const ctx = { home: dir, env: {}, now: Date.now(), fs: nodeFs() };
  const names = Array.from({ length: SERVERS }, (_, s) => `server-${s}`);

  // The calls one resolution makes, recorded once (the recording view is slower: not timed).
  const calls: Call[] = [];
  {
    const sources = await loadPolicySources(file, ctx);
    await resolvePolicy(sources.files, { ...ctx, fs: recordingFs(nodeFs(), calls) });
  }
  const resolveTimes: number[] = [];
  const totalTimes: number[] = [];
  const bareTimes: number[] = [];
  /**
   * What a sandboxed server's proxy adds to each resolution (`policy/explain` with `writers`,
   * compared on every recompute: every block's writable roots), timed after every server's list
   * is built, as the daemon has them by then (`prepare`).
   */
  const writersTimes: number[] = [];
  let roots = 0;
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    const sources = await loadPolicySources(file, ctx);
    const t1 = performance.now();
    const resolved = await resolvePolicy(sources.files, { ...ctx, now: Date.now() });
    roots = 0;
    for (const n of names) roots += resolved.roots(n).length;
    const t2 = performance.now();
    resolveTimes.push(t2 - t1);
    totalTimes.push(t2 - t0);
    resolved.writers(names[0]!);
    writersTimes.push(performance.now() - t2);
    const b0 = performance.now();
    await replay(calls);
    bareTimes.push(performance.now() - b0);
  }
  // The first run warms the JIT and the OS's dentry cache; report the rest.
  const resolveStats = summary(resolveTimes.slice(1));
  const totalStats = summary(totalTimes.slice(1));
  const bareStats = summary(bareTimes.slice(1));
  const writersStats = summary(writersTimes.slice(1));
  const ratio = Math.round((resolveStats.p50 / bareStats.p50) * 100) / 100;
  const counts: Record<string, number> = {};
  for (const [op] of calls) counts[op] = (counts[op] ?? 0) + 1;
  const check = await loadAndResolve({ configFile: file }, ctx);
  const ok = report(
    'resolve',
    {
      servers: SERVERS,
      rules: SERVERS * 10,
      directories: GROUPS * PER_GROUP,
      roots,
      resolveMs: resolveStats,
      bareWalkMs: bareStats,
      ratio,
      calls: counts,
      loadAndResolveMs: totalStats,
      writersMs: writersStats,
      errors: check.errors.length,
    },
    [
      [
        `resolve p50 ${resolveStats.p50} ms <= ${RATIO_TARGET}x a bare walk of the same calls (p50 ${bareStats.p50} ms): ${ratio}x`,
        ratio <= RATIO_TARGET,
      ],
      [`load + resolve p50 ${totalStats.p50} ms (information)`, true],
      [
        `a sandboxed server's writers (every block's writable roots), once per resolution: p50 ${writersStats.p50} ms, beside the resolution's ${resolveStats.p50} ms (information)`,
        true,
      ],
      ['policy valid', check.errors.length === 0],
    ],
  );
  process.exitCode = ok ? 0 : 1;
} finally {
  if (!process.env.KEEP) rmSync(dir, { recursive: true, force: true });
  else console.log(dir);
}
