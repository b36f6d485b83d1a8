// `npm test`'s steps before tap: compile the tests, lint, check formatting. Each of the three is
// one process on one core, about 80 s of CPU in all; one after the other they left a core of a
// 2-core CI machine idle for over a minute per Node version. They do not depend on each other
// (ESLint and Prettier read the sources, tsc writes dist/, which both ignore), so they run side
// by side once the generated validator they all read is written. Each one's output is printed
// whole, in a fixed order, when all have ended; the exit status is 1 if any of them failed.
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const bin = (name) => `${root}node_modules/.bin/${name}`;

const first = spawnSync(process.execPath, [`${root}scripts/build-validator.mjs`], {
  cwd: root,
  stdio: 'inherit',
});
if (first.status !== 0) process.exit(first.status ?? 1);

const STEPS = [
  [
    'build the tests',
    `node scripts/clean-test-build.mjs && ${bin('tsc')} -p tsconfig.json && node scripts/bundle.mjs`,
  ],
  ['eslint .', `${bin('eslint')} .`],
  ['prettier --check .', `${bin('prettier')} --check .`],
];

function run([name, command]) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn('/bin/sh', ['-c', command], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    child.stderr.on('data', (b) => (out += b));
    child.on('close', (code, signal) =>
      resolve({ name, out, ok: code === 0, status: signal ?? code, ms: Date.now() - started }),
    );
  });
}

const results = await Promise.all(STEPS.map(run));
let failed = 0;
for (const r of results) {
  process.stdout.write(`\n> ${r.name}\n${r.out}`);
  const verdict = r.ok ? 'ok' : `FAILED (${r.status})`;
  process.stdout.write(`${r.name}: ${verdict} in ${(r.ms / 1000).toFixed(1)} s\n`);
  if (!r.ok) failed++;
}
process.exit(failed > 0 ? 1 : 0);
