/**
 * The decision log must not slow answers: roots/check p50 against a daemon that records every
 * decision, beside the same daemon with the log off, requests alternating in one run.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { RootsClient } from '../protocol/client.js';
import { pinToOneCpu, report, startDaemon, summary, tempDir } from './common.js';

const COUNT = Number(process.env.BENCH_COUNT ?? 5000);
const WARMUP = 500;

const dir = tempDir();
mkdirSync(join(dir, 'work', 'src'), { recursive: true });
const config = join(dir, 'policy.yaml');
writeFileSync(
  config,
  `version: 1\ndeny: ['**/.env']\nservers:\n  bench:\n    roots: [{path: ${dir}/work}]\n`,
);
const start = (name: string, extra: string[]) =>
  startDaemon({
    config,
    socket: join(dir, name, 'd.sock'),
    stateDir: join(dir, name, 'state'),
    extra,
  });
const on = await start('on', []);
const off = await start('off', ['--decision-log-kib', '0']);
// Both daemons and this client on one CPU, as socket.ts pins its servers: unpinned, which of the
// two daemons the scheduler left on the client's core decided the ratio (0.96-2.14 in six runs).
// The log's write then also competes on that CPU: the figure includes all of its cost.
pinToOneCpu([on.pid!, off.pid!, process.pid]);
try {
  const a = await RootsClient.connect({ socket: join(dir, 'on', 'd.sock') });
  const b = await RootsClient.connect({ socket: join(dir, 'off', 'd.sock') });
  const withLog: number[] = [];
  const without: number[] = [];
  for (let i = 0; i < COUNT + WARMUP; i++) {
    const path = join(dir, 'work', 'src', `f${i % 100}.ts`);
    const context = { tool: 'read_text_file', client: 'bench 1' };
    const time = async (c: RootsClient): Promise<number> => {
      const t0 = performance.now();
      await c.check('bench', path, 'read', context);
      return performance.now() - t0;
    };
    // Each goes first half the time: the second request of a pair finds a warmer machine.
    let ta: number, tb: number;
    if (i % 2 === 0) {
      ta = await time(a);
      tb = await time(b);
    } else {
      tb = await time(b);
      ta = await time(a);
    }
    if (i >= WARMUP) {
      withLog.push(ta);
      without.push(tb);
    }
  }
  await a.close();
  await b.close();
  const s = summary(withLog);
  const f = summary(without);
  const bytes = statSync(join(dir, 'on', 'state', 'decisions.jsonl')).size;
  process.stdout.write(
    `roots/check p50 ${s.p50.toFixed(3)} ms with the decision log, ${f.p50.toFixed(3)} ms without (${COUNT} each, alternating); ${bytes} bytes logged\n`,
  );
  const ok = report('decision-log', { on: s, off: f, count: COUNT, bytes }, [
    [
      `check p50 with the log ≤ 1.10 × without (${(s.p50 / f.p50).toFixed(2)}×)`,
      s.p50 <= f.p50 * 1.1,
    ],
  ]);
  process.exitCode = ok ? 0 : 1;
} finally {
  on.kill();
  off.kill();
}
