/**
 * Install from the package, as users will: `npm pack`, a global install into a temporary prefix,
 * then the three commands from outside the repository, in a home of their own, in front of the
 * real filesystem server. The package's file list is printed and checked: what the commands need,
 * and nothing of the repository's own (tests, benchmarks, fixtures, CI, sources, source maps).
 */
import { spawn, spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import t from 'tap';
import { REPO } from '../helpers/bin.js';
import { FS_SERVER, waitFor } from '../helpers/proxy.js';

// npm builds a whole dependency tree here: about 20 s on an idle 2-core machine, several times
// that on a busy one. A limit of its own, so that load does not cut it off at tap's 180 s.
t.setTimeout(360_000);

const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
  version: string;
  bin: Record<string, string>;
};

/**
 * npm itself, from the repository, with the test's environment (and so npm's own cache), and the
 * extra certificates the test runner keeps from the other tests (scripts/run-tests.mjs), which
 * npm needs where the registry is reached through a TLS-inspecting proxy.
 */
function npm(args: string[], cwd = REPO): SpawnSyncReturns<string> {
  const ca = process.env.MCP_ROOTS_TEST_CA_CERTS;
  const env = ca === undefined ? process.env : { ...process.env, NODE_EXTRA_CA_CERTS: ca };
  const r = spawnSync('npm', args, { cwd, encoding: 'utf8', timeout: 150_000, env });
  if (r.status !== 0) throw new Error(`npm ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return r;
}

/** What the repository has and the package must not: each a class of files, not a list. */
const NOT_SHIPPED: [RegExp, string][] = [
  [/^test\//, 'tests'],
  [/^bench\/|^dist\/bench\//, 'benchmarks'],
  [/fixtures?\//, 'fixtures'],
  [/^examples\/demo\//, "the repository's demo"],
  [/^\.ci\/|^\.github\//, 'CI'],
  [/^\.tap\/|^\.tmp\/|^node_modules\//, 'build and test leftovers'],
  [/\.test\.[cm]?[jt]s$/, 'test files'],
  [/(?<!\.d)\.ts$/, 'TypeScript sources (dist/ has the JavaScript and .d.ts)'],
  [/\.map$/, 'source maps (they point at sources the package does not ship)'],
  [/\.tsbuildinfo$|^tsconfig|^eslint\.config|^\.prettier/, 'build configuration'],
  [
    /^dist\/(?:daemon\/bin|proxy\/bin|cli\/cached-main)\./,
    "tsc's output of the bins' entries (each bin runs from its bundle)",
  ],
];

/** What the commands and the library need at run time, and what the README points users to. */
const SHIPPED = [
  'package.json',
  'README.md',
  'roots.schema.json',
  'dist/index.js',
  'dist/index.d.ts',
  'systemd/mcp-rootsd.service',
  'systemd/mcp-rootsd.socket',
  'docs/policy.md',
  'docs/protocol.md',
  'docs/security.md',
  'examples/hosts/README.md',
];

// One `npm pack` for both tests: its --json report lists the files the tarball holds (the same
// list `npm pack --dry-run` prints), and the tarball is what gets installed.
const base = realpathSync(mkdtempSync(join(tmpdir(), 'mr-pack-')));
t.teardown(() => rmSync(base, { recursive: true, force: true }));
const [packed] = JSON.parse(
  npm(['pack', '--json', '--ignore-scripts', '--pack-destination', base]).stdout,
) as { filename: string; files: { path: string }[]; size: number; unpackedSize: number }[];

void t.test('the package ships what it needs and nothing it does not', (t) => {
  const files = packed!.files.map((f) => f.path).sort();
  t.comment(
    `npm pack: ${files.length} files, ${packed!.size} bytes packed, ${packed!.unpackedSize} unpacked:\n` +
      files.join('\n'),
  );
  for (const [pattern, what] of NOT_SHIPPED) {
    t.same(
      files.filter((f) => pattern.test(f)),
      [],
      `no ${what}`,
    );
  }
  for (const f of [...SHIPPED, ...Object.values(pkg.bin).map((b) => b.replace(/^\.\//, ''))]) {
    t.ok(files.includes(f), `ships ${f}`);
  }
  t.end();
});

void t.test('installed globally from the tarball, the three commands work', async (t) => {
  const [home, run, prefix, elsewhere] = ['home', 'run', 'prefix', 'elsewhere'].map((d) =>
    join(base, d),
  ) as [string, string, string, string];
  for (const d of [home, run, elsewhere]) mkdirSync(d, { mode: 0o700 });
  mkdirSync(join(home, 'projects', 'app'), { recursive: true });

  // As a user would, from npm's cache where it has the packages (`npm ci` filled it), without
  // the audit and funding look-ups, which need the network and prove nothing here.
  npm(
    [
      'install',
      '--global',
      '--prefix',
      prefix,
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--no-update-notifier',
    ].concat(join(base, packed!.filename)),
    elsewhere,
  );
  const binDir = join(prefix, 'bin');
  for (const name of Object.keys(pkg.bin)) t.ok(existsSync(join(binDir, name)), `${name} on PATH`);

  // Only what a login shell would have: none of tap's variables, nothing of the repository.
  const vars: Record<string, string> = {
    HOME: home,
    XDG_RUNTIME_DIR: run,
    PATH: `${binDir}:${dirname(process.execPath)}:/usr/bin:/bin`,
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
  };
  const clean = (command: string, args: string[]): [string, string[]] => [
    '/usr/bin/env',
    ['-i', ...Object.entries(vars).map(([k, v]) => `${k}=${v}`), command, ...args],
  ];
  const sh = (command: string, ...args: string[]) => {
    const [c, a] = clean(command, args);
    return spawnSync(c, a, { cwd: elsewhere, encoding: 'utf8', timeout: 30_000 });
  };

  const help = sh('rootsctl', '--help');
  t.equal(help.status, 0, `rootsctl --help: ${help.stderr}`);
  t.match(help.stdout, /rootsctl/);
  for (const command of ['rootsctl', 'mcp-rootsd', 'mcp-roots-proxy']) {
    const version = sh(command, '--version');
    t.equal(version.stdout.trim(), pkg.version, `${command} --version`);
  }

  const init = sh('rootsctl', 'init');
  t.equal(init.status, 0, `rootsctl init: ${init.stderr}`);
  const policy = readFileSync(join(home, '.config', 'mcp-roots.yaml'), 'utf8');
  const schema = /\$schema=(\S+)/.exec(policy)?.[1];
  t.equal(
    schema,
    join(prefix, 'lib', 'node_modules', 'mcp-roots', 'roots.schema.json'),
    "the policy's $schema is the installed package's",
  );
  t.ok(schema !== undefined && existsSync(schema), 'and it is there');

  // The daemon with every default: the socket under XDG_RUNTIME_DIR, the policy init wrote.
  const [dc, da] = clean('mcp-rootsd', []);
  const daemon = spawn(dc, da, { cwd: elsewhere, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  daemon.stdout.on('data', (b: Buffer) => (log += b.toString()));
  daemon.stderr.on('data', (b: Buffer) => (log += b.toString()));
  const exited = new Promise<number | null>((resolve) => daemon.once('exit', resolve));
  let gone = false;
  void exited.then(() => (gone = true));
  t.teardown(async () => {
    if (!gone) daemon.kill('SIGTERM');
    await exited;
  });
  const socket = join(run, 'mcp-roots', 'rootsd.sock');
  await waitFor(() => gone || log.includes(`listening on ${socket}`), 60_000, 'the daemon');
  t.notOk(gone, `mcp-rootsd runs: ${log}`);

  const status = sh('rootsctl', 'status');
  t.equal(status.status, 0, `rootsctl status: ${status.stderr}`);
  t.match(status.stdout, `socket:   ${socket}`);
  t.match(status.stdout, /filesystem\s+1\s+1/, 'filesystem: one root, read-only');

  // The proxy in front of the real filesystem server, with an SDK client as the host.
  const [pc, pa] = clean('mcp-roots-proxy', [
    '--server',
    'filesystem',
    '--',
    process.execPath,
    FS_SERVER,
  ]);
  const transport = new StdioClientTransport({
    command: pc,
    args: pa,
    cwd: elsewhere,
    stderr: 'pipe',
  });
  let proxyErr = '';
  transport.stderr?.on('data', (b: Buffer) => (proxyErr += b.toString()));
  const client = new Client({ name: 'install-test', version: '0' }, { capabilities: {} });
  await client.connect(transport);
  t.teardown(() => client.close());
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: args });
    return {
      text: (r.content as { text?: string }[]).map((c) => c.text ?? '').join('\n'),
      isError: r.isError === true,
    };
  };
  const projects = join(home, 'projects');
  await waitFor(
    async () => (await call('list_allowed_directories', {})).text.includes(projects),
    30_000,
    "the policy's root reaching the server",
  );
  const listed = await call('list_directory', { path: projects });
  t.notOk(listed.isError, `a read inside the root goes through: ${listed.text}`);
  t.match(listed.text, 'app');
  const write = await call('write_file', { path: join(projects, 'new.txt'), content: 'x' });
  t.ok(write.isError, 'a write under the read-only root is refused');
  t.notOk(existsSync(join(projects, 'new.txt')), 'and nothing was written');
  const outside = await call('list_directory', { path: home });
  t.ok(outside.isError, 'a read outside the root is refused');
  t.match(proxyErr, `connected to mcp-rootsd on ${socket}`);

  await client.close();
  daemon.kill('SIGTERM');
  t.equal(await exited, 0, 'mcp-rootsd exits 0 on SIGTERM');
});
