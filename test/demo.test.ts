import { spawn, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import t from 'tap';
import type { Io } from '../cli/io.js';
import { main } from '../cli/run.js';
import type { DaemonStatus, ListRootsResult } from '../protocol/methods.js';
import { bin, REPO } from './helpers/bin.js';
import { shortDir } from './helpers/short-dir.js';

function capture(env: Io['env'], cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (s) => out.push(s), err: (s) => err.push(s), env, cwd, isTTY: false };
  return { io, out: () => out.join(''), err: () => err.join('') };
}

const policies = [
  ...readdirSync(join(REPO, 'examples'))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => `examples/${f}`),
  ...readdirSync(join(REPO, 'examples/demo'))
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => `examples/demo/${f}`),
];

void t.test('every example policy passes rootsctl validate', async (t) => {
  t.ok(policies.length >= 5, `found ${policies.join(', ')}`);
  const home = t.testdir({});
  for (const policy of policies) {
    const run = capture({ HOME: home, PATH: process.env.PATH }, REPO);
    const code = await main(['validate', '--json', policy], run.io);
    t.equal(code, 0, `${policy}: exit 0 ${run.err()}`);
    if (run.out() !== '') {
      const result = JSON.parse(run.out()) as { errors: unknown[]; warnings: unknown[] };
      t.same(result.errors, [], `${policy}: no errors`);
      if (policy.startsWith('examples/demo/'))
        t.same(result.warnings, [], `${policy}: no warnings either`);
    }

    // Each begins with the $schema line, and its path leads to the schema.
    const first = readFileSync(join(REPO, policy), 'utf8').split('\n')[0]!;
    const m = /^# yaml-language-server: \$schema=(\S+)$/.exec(first);
    t.ok(m, `${policy} begins with the $schema line`);
    if (m) t.equal(resolve(dirname(join(REPO, policy)), m[1]!), join(REPO, 'roots.schema.json'));
  }
});

void t.test("npm start's command serves the demo policy", async (t) => {
  const script = (
    JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts.start!;
  const hint = /node dist\/cli\/main\.js (--socket \S+ status)/.exec(script);
  t.ok(hint, 'npm start says how to query the daemon');
  bin('daemon'); // a clear message when dist/ is missing

  // The command runs as written, from a copy of the repository's layout in a short directory,
  // so that it neither meets a demo the developer is running nor exceeds sun_path.
  const dir = shortDir();
  cpSync(join(REPO, 'examples/demo'), join(dir, 'examples/demo'), { recursive: true });
  cpSync(join(REPO, 'scripts/ensure-built.mjs'), join(dir, 'scripts/ensure-built.mjs'));
  symlinkSync(join(REPO, 'dist'), join(dir, 'dist'));
  const child = spawn('sh', ['-c', script], {
    cwd: dir,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
  t.teardown(async () => {
    // The whole process group: sh and the daemon it started.
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    await exited;
    rmSync(dir, { recursive: true, force: true });
  });
  const listening = new Promise<void>((done, fail) => {
    const timer = setTimeout(
      () => fail(new Error(`no "listening on" within 10 s:\n${stdout}${stderr}`)),
      10_000,
    );
    child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
    child.stderr.on('data', (b: Buffer) => {
      stderr += b.toString();
      if (stderr.includes(' listening on ')) {
        clearTimeout(timer);
        done();
      }
    });
    void exited.then((code) =>
      fail(new Error(`npm start's command exited (${code}):\n${stdout}${stderr}`)),
    );
  });
  await listening;
  t.match(stdout, 'node dist/cli/main.js --socket .tmp/demo/rootsd.sock status');
  const socket = join(dir, '.tmp/demo/rootsd.sock');
  t.match(stderr, ` listening on ${socket}; policy ${join(dir, 'examples/demo/mcp-roots.yaml')}`);

  const env = { HOME: dir, PATH: process.env.PATH };
  const status = capture(env, dir);
  t.equal(await main(['status', '--json', '--socket', socket], status.io), 0, status.err());
  const s = JSON.parse(status.out()) as DaemonStatus;
  t.same(s.policy.errors, []);
  t.same(
    s.servers.map((srv) => [srv.name, srv.roots, srv.readOnly, srv.nextExpiry ?? null]),
    [
      ['auditor', 2, 2, null],
      ['contractor', 2, 1, '2099-12-31T23:59:59.000Z'],
      ['filesystem', 4, 3, null],
      ['notes', 3, 1, null],
    ],
  );

  const workspace = join(dir, 'examples/demo/workspace');
  const expected: Record<string, [string, string, boolean][]> = {
    filesystem: [
      ['projects/api', 'project api', true],
      ['projects/legacy', 'project legacy', true],
      ['projects/website', 'Website', false],
      ['shared', 'shared', true],
    ],
    notes: [
      ['notes/ideas.md', 'ideas.md', false],
      ['notes/todo.md', 'todo.md', false],
      ['shared', 'shared', true],
    ],
    contractor: [
      ['projects/api', 'api', false],
      ['shared', 'shared', true],
    ],
    auditor: [
      ['', 'workspace', true],
      ['shared', 'shared', true],
    ],
    'someone-else': [['shared', 'shared', true]],
  };
  for (const [server, roots] of Object.entries(expected)) {
    const list = capture(env, dir);
    t.equal(await main(['list', server, '--json', '--socket', socket], list.io), 0, list.err());
    const result = JSON.parse(list.out()) as ListRootsResult;
    t.same(
      result.roots.map((r) => [r.uri, r.name, r._meta['mcp-roots/readOnly']]),
      roots.map(([p, name, ro]) => [`file://${join(workspace, p)}`, name, ro]),
      // The quick start invites edits to the demo: this checks the demo as committed.
      `${server}'s roots (if you changed examples/demo, undo it: git checkout examples/demo && git clean -fd examples/demo)`,
    );
  }

  const checks: [string, string[], number][] = [
    ['a secret inside the auditor root', ['auditor', 'workspace/secrets/api-token.txt'], 1],
    ['an .env file', ['filesystem', 'workspace/projects/website/.env'], 1],
    [
      'a writable draft',
      ['filesystem', 'workspace/projects/website/drafts/first-post.md', '--write'],
      0,
    ],
    [
      'an access: write deny',
      ['filesystem', 'workspace/projects/api/config/settings.toml', '--write'],
      1,
    ],
    ['reading under it', ['filesystem', 'workspace/projects/api/config/settings.toml'], 0],
  ];
  for (const [what, [server, path, ...rest], code] of checks) {
    const check = capture(env, dir);
    const args = ['check', server!, join(dir, 'examples/demo', path!), ...rest, '--socket', socket];
    t.equal(await main(args, check.io), code, what);
  }

  // The hint, exactly as printed, through the built rootsctl from where npm start ran.
  const spawned = spawnSync(process.execPath, [bin('rootsctl'), ...hint![1]!.split(' ')], {
    cwd: dir,
    env: { ...process.env, HOME: dir },
    encoding: 'utf8',
  });
  t.equal(spawned.status, 0, spawned.stderr);
  t.match(spawned.stdout, /\nfilesystem +4 +3 +-\n/);

  process.kill(-child.pid!, 'SIGTERM');
  await exited;
  t.notOk(existsSync(socket), 'SIGTERM: the daemon removed its socket');
});

void t.test('npm start builds dist/ first when it is not there', (t) => {
  // node_modules copied in, or `npm ci --ignore-scripts`: no `prepare`, so no dist/, and the
  // demo failed with Node's MODULE_NOT_FOUND stack trace.
  const dir = t.testdir({});
  cpSync(join(REPO, 'scripts/ensure-built.mjs'), join(dir, 'scripts/ensure-built.mjs'));
  const made = ['daemon', 'cli', 'proxy'].map((d) => `dist/${d}/main.js`);
  const project = (build: string) =>
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'x', scripts: { build } }));
  const ensure = () =>
    spawnSync(process.execPath, ['scripts/ensure-built.mjs'], { cwd: dir, encoding: 'utf8' });

  project('exit 7');
  const failed = ensure();
  t.equal(failed.status, 7, 'a failed build stops npm start');
  t.match(failed.stderr, 'dist/ is not built (npm ci builds it;');

  project(`mkdir -p dist/daemon dist/cli dist/proxy && touch ${made.join(' ')}`);
  const built = ensure();
  t.equal(built.status, 0, built.stderr);
  t.ok(
    made.every((f) => existsSync(join(dir, f))),
    'built',
  );
  const again = ensure();
  t.same([again.status, again.stdout, again.stderr], [0, '', ''], 'built already: nothing done');
  t.end();
});
