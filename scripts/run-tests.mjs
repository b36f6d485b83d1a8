// `npm test`'s test step, and `npm run test:file`: the compiled test files (dist/test/**/*.test.js,
// or those named), a few at a time, each in a Node process of its own. The tests are written with
// tap and print TAP; this runs them the way tap's own runner would, less two costs that runner
// puts into every test process: the coverage tracker (@tapjs/processinfo, always loaded, coverage
// or not) and the hooks of tap's module mocking, both run on a thread of their own on Node 20
// and 22. Together they took about 1.5 s of CPU per test process on Node 20 (0.35–1 s the
// tracker, about 0.8 s the mock hooks), some 190 s of a suite that is CPU-bound on two cores.
// Only files that mock modules (`t.mockImport`) get the mock hooks, and with them tap's ES module
// bundle, as `npx tap` does: hooks and plugin must be one instance. Every other file is run with
// `--conditions=cached-bundles`: it loads tap and yaml as CommonJS bundles compiled with a V8 code
// cache (scripts/bundle-test-deps.mjs, scripts/cached-bundle.cjs). `npx tap` still works (the
// `tap` section of package.json), just slower.
//
// Source maps (`--enable-source-maps`) only when files are named: they cost a test process 30 to
// 110 M instructions (Node reads and parses the map of every compiled module it loads), some 7 s of
// CPU over the suite. Without them a failure's stack and `at:` point into the compiled test,
// dist/test/…/x.test.js, line and column of tsc's output, which keeps the source's statements and
// order; `npm run test:file -- test/…/x.test.ts` runs it again with them, pointing into the .ts.
//
//   node scripts/run-tests.mjs [test/x.test.ts | dist/test/x.test.js ...] [--grep PATTERN ...]
//
//   MCP_ROOTS_TEST_JOBS  files run at once (default: CPUs + 4)
//
// Four more files than CPUs: the suite is mostly CPU (its children's), but many files also wait
// (a proxy's grace period for a server that ignores EOF, a client's reconnect backoff, a daemon's
// settle time, a grant's lifetime), and with fewer files the cores sat idle whenever several of
// them waited at once: on the project's 2-core machine, `npm test` took 6m29s with four at a time
// and 5m51s with six, the same head run one after the other (three at a time left a core idle
// still more: bench/FINDINGS.md, twelfth step). The tests' waits are ceilings sized for a machine
// running several suites at once, which six files on two cores are well within.
//
// Each file's TAP is kept and printed whole when the file fails; the last lines are tap's summary
// over every file (`# { total, pass, fail }`), which .ci/run reads. A file is given 180 s (tap's
// own timer, TAP_TIMEOUT) and killed 20 s after that if it has not ended.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { clearTimeout, setTimeout } from 'node:timers';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const TIMEOUT_S = 180;
const KILL_AFTER_MS = (TIMEOUT_S + 20) * 1000;
/** Each file's last duration, so that the longest start first and none is left running alone. */
const TIMES = join(root, '.tmp', 'test-times.json');
/**
 * Durations from one full run on the project's 2-core machine, for a checkout that has none of its
 * own yet (a fresh clone's first run, which CI's first Node version is): run in path order, the
 * longest files could start last and leave a core idle for half a minute. Only an ordering hint,
 * so a stale entry costs nothing but order; refresh it from .tmp/test-times.json now and then.
 */
const SEED_TIMES = join(root, 'scripts', 'test-times.json');
const MOCK_HOOKS = pathToFileURL(join(root, 'node_modules/@tapjs/mock/dist/esm/import.mjs')).href;

function usage(message) {
  process.stderr.write(
    `run-tests: ${message}\nusage: node scripts/run-tests.mjs [test/x.test.ts ...] [--grep PATTERN ...]\n`,
  );
  process.exit(2);
}

const files = [];
const grep = [];
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i++) {
  const arg = args[i];
  if (arg === '--grep' || arg === '-g') {
    if (args[i + 1] === undefined) usage(`${arg} needs a pattern`);
    grep.push(args[++i]);
  } else if (arg.startsWith('--grep=')) grep.push(arg.slice('--grep='.length));
  else if (arg.startsWith('-')) usage(`unknown option ${arg}`);
  else files.push(compiledPath(arg));
}
const named = files.length > 0;
if (!named) files.push(...allTests(join(root, 'dist', 'test')));
if (files.length === 0) usage('no compiled tests under dist/test: run `npm run build:tests` first');

/** test/…/x.test.ts (or dist/test/…/x.test.js) as the compiled file, relative to the root. */
function compiledPath(arg) {
  const m = /^(?:\.\/)?test\/(.+)\.ts$/.exec(arg);
  const compiled = m ? `dist/test/${m[1]}.js` : relative(root, join(process.cwd(), arg));
  if (!existsSync(join(root, compiled)))
    usage(`${arg}: no compiled ${compiled}; is it a test under test/, and is it built?`);
  return compiled;
}

function allTests(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const rel = relative(root, path);
    if (entry.isDirectory()) {
      if (rel !== 'dist/test/fixtures' && rel !== 'dist/test/helpers') out.push(...allTests(path));
    } else if (entry.name.endsWith('.test.js')) out.push(rel);
  }
  return out.sort();
}

function readTimes(path) {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return {};
  }
}

/**
 * The test processes' environment: this one's, without NODE_EXTRA_CA_CERTS. Where it is set (CI
 * machines behind a TLS-inspecting proxy set it), Node 20 parses the whole bundle of extra
 * certificates at every start, about 50 ms of CPU, and the suite starts thousands of Node processes
 * (daemons, proxies, servers, rootsctl), none of which speaks TLS. A test that runs npm against the
 * registry puts it back from MCP_ROOTS_TEST_CA_CERTS (test/install/pack.test.ts).
 */
const TEST_ENV = { ...process.env };
delete TEST_ENV.NODE_EXTRA_CA_CERTS;
if (process.env.NODE_EXTRA_CA_CERTS !== undefined)
  TEST_ENV.MCP_ROOTS_TEST_CA_CERTS = process.env.NODE_EXTRA_CA_CERTS;
/**
 * Node's module compile cache (Node 22.1 and later; Node 20 ignores it) for the test processes and
 * every Node process they start with this environment: daemons, proxies, servers, rootsctl, npm.
 * Each compiles the same modules (the bins' bundles, the MCP SDKs, the compiled tests) thousands of
 * times a run; with it, V8 deserializes what an earlier process compiled. It lives in the
 * checkout's .tmp/, apart from anything a test looks at; rootsctl's own code cache (a vm.Script,
 * cli/code-cache.ts) is not a module compile and is untouched by it.
 */
TEST_ENV.NODE_COMPILE_CACHE ??= join(root, '.tmp', 'node-compile-cache');

const times = { ...readTimes(SEED_TIMES), ...readTimes(TIMES) };
// Unknown files first (a new file may be long), then the longest first.
const queue = files.slice().sort((a, b) => (times[b] ?? Infinity) - (times[a] ?? Infinity));
const jobs = Number(process.env.MCP_ROOTS_TEST_JOBS) || availableParallelism() + 4;

const totals = { total: 0, pass: 0, fail: 0, skip: 0, todo: 0 };
const failedFiles = [];
let done = 0;
const running = new Set();
const started = Date.now();

/** tap's closing line in a file's output: `# { total: 35, pass: 33, fail: 2, skip: 1 }`. */
function summaryOf(out) {
  const lines = out.match(/^# \{ total: .*\}$/gm);
  if (!lines) return undefined;
  const last = lines[lines.length - 1];
  const counts = {};
  for (const [, key, n] of last.matchAll(/(\w+): (\d+)/g)) counts[key] = Number(n);
  return counts;
}

function runFile(file) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    const source = readFileSync(join(root, file), 'utf8');
    const mocks = /\.mock(?:Import|Require)\(/.test(source);
    const child = spawn(
      process.execPath,
      [
        mocks ? `--import=${MOCK_HOOKS}` : '--conditions=cached-bundles',
        ...(named ? ['--enable-source-maps'] : []),
        file,
      ],
      {
        cwd: root,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...TEST_ENV,
          TAP: '1',
          TAP_TIMEOUT: String(TIMEOUT_S),
          ...(grep.length > 0 ? { TAP_GREP: grep.join('\n') } : {}),
        },
      },
    );
    running.add(child);
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    child.stderr.on('data', (b) => (out += b));
    const killer = setTimeout(() => {
      out += `\n# run-tests: no end after ${KILL_AFTER_MS / 1000} s, killed\n`;
      child.kill('SIGKILL');
    }, KILL_AFTER_MS);
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      running.delete(child);
      const ms = Date.now() - t0;
      times[file] = ms;
      const counts = summaryOf(out);
      const ok = code === 0 && counts !== undefined && !counts.fail;
      for (const key of Object.keys(totals)) totals[key] += counts?.[key] ?? 0;
      if (!ok && !counts?.fail) {
        // Ended without saying what failed (a crash, a kill, an exit code of its own): one failure.
        totals.total++;
        totals.fail++;
      }
      done++;
      const line = `${ok ? 'ok' : 'not ok'} ${done} - ${file} # time=${ms}ms`;
      if (ok) process.stdout.write(`${line}\n`);
      else {
        failedFiles.push({ file, what: failuresOf(out) });
        const how = signal ? `signal ${signal}` : `exit ${code}`;
        process.stdout.write(`${line} (${how})\n${out.replace(/^/gm, '    ')}\n`);
      }
      resolve();
    });
  });
}

/** At most this many lines of one file's failures are repeated at the end of the run. */
const FAILURE_LINES = 40;

/**
 * The failed assertions of one file's TAP, each with its diagnostics (the YAML block after it):
 * repeated at the end of the run, where a reader of a long log (or of its last lines only, as CI
 * keeps them) finds what failed without the whole file's TAP above it.
 */
function failuresOf(tap) {
  const lines = tap.split('\n');
  const picked = [];
  for (let i = 0; i < lines.length && picked.length < FAILURE_LINES; i++) {
    if (!/^\s*not ok /.test(lines[i])) continue;
    picked.push(lines[i]);
    const indent = /^\s*/.exec(lines[i])[0];
    if (lines[i + 1]?.startsWith(`${indent}  ---`)) {
      for (i++; i < lines.length && picked.length < FAILURE_LINES; i++) {
        picked.push(lines[i]);
        if (lines[i].startsWith(`${indent}  ...`)) break;
      }
    }
  }
  // A crash or a kill says nothing in TAP: its last lines do.
  return picked.length > 0 ? picked : lines.filter((l) => l.trim() !== '').slice(-10);
}

async function worker() {
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) await runFile(file);
}

const stop = (signal) => {
  for (const child of running) child.kill(signal);
  process.exit(130);
};
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));

process.stdout.write(`TAP version 14\n1..${queue.length}\n`);
await Promise.all(Array.from({ length: Math.min(jobs, queue.length) }, worker));

try {
  mkdirSync(dirname(TIMES), { recursive: true });
  writeFileSync(TIMES, `${JSON.stringify(times, null, 1)}\n`);
} catch {
  // only an ordering hint for the next run
}
const shown = Object.entries(totals)
  .filter(([key, n]) => n > 0 || key === 'total' || key === 'pass')
  .map(([key, n]) => `${key}: ${n}`);
for (const { file, what } of failedFiles) {
  process.stdout.write(`# failed: ${file}\n`);
  for (const line of what) process.stdout.write(`# > ${line}\n`);
}
process.stdout.write(`# ${files.length} files, ${failedFiles.length} failed, ${jobs} at a time\n`);
process.stdout.write(`# { ${shown.join(', ')} }\n# time=${Date.now() - started}ms\n`);
process.exit(failedFiles.length > 0 ? 1 : 0);
