/**
 * `npm run bench`: every benchmark, one after another, each in its own process. Prints each
 * result and exits 1 if any target is missed. `npm run bench -- resolve socket` runs a subset.
 */
import { spawnSync } from 'node:child_process';
import { dist } from './common.js';

const ALL = [
  'resolve',
  'deep-path',
  'session-latency',
  'proxy-overhead',
  'socket',
  'watch-latency',
  'stall',
  'big-glob',
  'churn-rss',
  'idle-cpu',
  'fuzz-socket',
  'decision-log',
  'cli-startup',
  'daemon-rss',
  'sandbox-start',
  'restart-latency',
  'deny-window',
  'key-scan',
  'plan-roots',
];
const chosen = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ALL;
const env = { ...process.env, FUZZ_SECONDS: process.env.FUZZ_SECONDS ?? '60' };

const failed: string[] = [];
for (const name of chosen) {
  if (!ALL.includes(name)) {
    process.stderr.write(`unknown benchmark "${name}"; choose from ${ALL.join(', ')}\n`);
    process.exit(2);
  }
  process.stdout.write(`\n== ${name}\n`);
  const r = spawnSync(process.execPath, [dist(`bench/${name}.js`)], { stdio: 'inherit', env });
  if (r.status !== 0) failed.push(name);
}
process.stdout.write(
  failed.length === 0 ? '\nall targets met\n' : `\ntargets missed: ${failed.join(', ')}\n`,
);
process.exitCode = failed.length === 0 ? 0 : 1;
