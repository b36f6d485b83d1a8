/**
 * The cost of one access decision for a path about 4 KB long whose last ~1,900 components do
 * not exist (the shape of an argument an agent can send by the hundred), beside a short path
 * in the same root, measured in the same run. Target: deep p50 < 1 ms.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadAndResolve, nodeFs } from '../policies/index.js';
import { report, summary, tempDir } from './common.js';

const RUNS = 500;
const dir = tempDir();
try {
  const root = join(dir, 'home', 'work');
  mkdirSync(join(root, 'src'), { recursive: true });
  const file = join(dir, 'policy.yaml');
  const denies = ['**/.env', '**/.git/config', `${dir}/home/.ssh`, `${root}/*/secrets/**`];
  const deny = denies.map((d) => `  - "${d}"\n`).join('');
  writeFileSync(
    file,
    `version: 1\ndeny:\n${deny}servers:\n  s:\n    roots:\n      - path: ${root}\n`,
  );
  const ctx = { home: join(dir, 'home'), env: {}, now: Date.now(), fs: nodeFs() };
  const { resolved, errors } = await loadAndResolve({ configFile: file }, ctx);
  const prefix = join(root, 'src');
  const missing = Math.floor((4000 - prefix.length) / 2);
  const deep = `${prefix}/${'a/'.repeat(missing)}x`;
  const short = `${prefix}/a/x`;

  const time = async (path: string): Promise<{ ms: number; allowed: boolean }> => {
    const t0 = performance.now();
    const r = await resolved.check('s', path, 'write');
    return { ms: performance.now() - t0, allowed: r.allowed };
  };
  const deepMs: number[] = [];
  const shortMs: number[] = [];
  let allowed = true;
  // Alternate, so that both see the same machine; the first 50 of each warm the JIT.
  for (let i = 0; i < RUNS + 50; i++) {
    const d = await time(deep);
    const s = await time(short);
    allowed &&= d.allowed && s.allowed;
    if (i >= 50) {
      deepMs.push(d.ms);
      shortMs.push(s.ms);
    }
  }
  const deepStats = summary(deepMs);
  const shortStats = summary(shortMs);
  const ok = report(
    'deep-path',
    {
      deepBytes: deep.length,
      missingComponents: missing + 1,
      deepMs: deepStats,
      shortMs: shortStats,
    },
    [
      [`deep missing path p50 ${deepStats.p50} ms < 1 ms`, deepStats.p50 < 1],
      [
        `short path p50 ${shortStats.p50} ms (peer; deep/short ${(deepStats.p50 / shortStats.p50).toFixed(2)})`,
        true,
      ],
      ['both allowed (the decision ran to the end)', allowed && errors.length === 0],
    ],
  );
  process.exitCode = ok ? 0 : 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
