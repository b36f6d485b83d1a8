// `npm test`: compile the tests, lint, check formatting, and run every test file.
//
// The three checks are one process on one core each, about 80 s of CPU in all. They do not
// depend on each other (ESLint and Prettier read the sources, tsc writes dist/, which both
// ignore), so they run side by side once the generated validator they all read is written. The
// tests need only the build, which ends well before ESLint (type-aware rules type-check the
// project a second time): they start as soon as it has passed, so that no core waits for the
// linters. A check's output is printed whole when it ends, between whole lines of the tests'
// output (.ci/run reads the tests' summary line, `# { total, pass, fail }`, wherever it is). The
// exit status is 1 if any check or any test failed. Options go to the test runner (e.g. --grep).
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const bin = (name) => `${root}node_modules/.bin/${name}`;

const first = spawnSync(process.execPath, [`${root}scripts/build-validator.mjs`], {
  cwd: root,
  stdio: 'inherit',
});
if (first.status !== 0) process.exit(first.status ?? 1);

const BUILD = [
  'build the tests',
  `node scripts/clean-test-build.mjs && ${bin('tsc')} -p tsconfig.json && node scripts/bundle.mjs && node scripts/bundle-test-deps.mjs`,
];
const LINTS = [
  ['eslint .', `${bin('eslint')} .`],
  ['prettier --check .', `${bin('prettier')} --check .`],
];

/** The tests' output after its last whole line, and the checks' reports waiting for that line. */
let testsPartial = '';
const pendingBlocks = [];
let failed = 0;

function report(r) {
  const verdict = r.ok ? 'ok' : `FAILED (${r.status})`;
  const block = `\n> ${r.name}\n${r.out}${r.name}: ${verdict} in ${(r.ms / 1000).toFixed(1)} s\n`;
  // Printed between whole lines of the tests' output, never inside one.
  if (testsPartial === '') process.stdout.write(block);
  else pendingBlocks.push(block);
  if (!r.ok) failed++;
}

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

function runTests() {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [`${root}scripts/run-tests.mjs`, ...process.argv.slice(2)],
      { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    child.stdout.on('data', (b) => {
      const text = testsPartial + b;
      const end = text.lastIndexOf('\n') + 1;
      process.stdout.write(text.slice(0, end));
      testsPartial = text.slice(end);
      if (testsPartial === '')
        for (const block of pendingBlocks.splice(0)) process.stdout.write(block);
    });
    child.on('close', (code, signal) => {
      process.stdout.write(testsPartial);
      testsPartial = '';
      resolve(code === 0 && signal === null);
    });
  });
}

const lints = LINTS.map((step) => run(step).then(report));
const build = await run(BUILD);
report(build);
if (!build.ok) process.stdout.write('\nThe tests did not run: the build failed (above).\n');
const testsOk = build.ok ? await runTests() : true;
await Promise.all(lints);
for (const block of pendingBlocks.splice(0)) process.stdout.write(block);
if (!testsOk) failed++;
process.exit(failed > 0 ? 1 : 0);
