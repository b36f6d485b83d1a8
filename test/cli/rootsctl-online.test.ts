/**
 * rootsctl in-process against a running daemon (exact output and exit codes), `watch` across a
 * restart, no daemon at all, and one run of the built binary.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { bin } from '../helpers/bin.js';
import { main } from '../../cli/run.js';
import { policyTree as tree } from '../helpers/cli-tree.js';
import { rootsctl } from '../helpers/cli.js';
import { shortDir, startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/proxy.js';

const run = promisify(execFile);

void t.test('online: every command against a running daemon', async (t) => {
  const { dir, home } = tree();
  const d = await startDaemon(t, undefined, { dir, configFile: join(dir, 'p.yaml'), home });
  const env = { HOME: home, MCP_ROOTS_SOCKET: d.socket };
  const status = await rootsctl(['status'], { env });
  t.equal(status.code, 0);
  t.match(
    status.out,
    /^mcp-rootsd 0\.1\.0, pid \d+, up \d+s\nsocket: {3}.*rootsd\.sock\nstate: {4}.*state\npolicy: {3}.*p\.yaml; revision \d+, loaded \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\n/,
  );
  t.match(status.out, /SERVER {2}ROOTS {2}READ-ONLY {2}NEXT EXPIRY\nfs {6}2 {6}1 {10}-/);
  t.match(status.out, /rootsctl 0\.1\.0/);
  // The watch line counts the directories above the watched ones (watched for renames) apart.
  t.match(
    status.out,
    /\nwatches: {2}\d+ directories \(and [1-9]\d* above them\), (events|degraded)/,
  );
  const statusJson = JSON.parse((await rootsctl(['status', '--json'], { env })).out) as {
    pid: number;
  };
  t.equal(statusJson.pid, process.pid);
  const list = await rootsctl(['list', 'fs', '--json'], { env });
  t.equal((JSON.parse(list.out) as { roots: unknown[] }).roots.length, 2);
  t.equal((await rootsctl(['check', 'fs', join(home, 'proj/x')], { env })).code, 0);
  t.equal((await rootsctl(['check', 'fs', join(home, 'proj/secret/x')], { env })).code, 1);
  t.match(
    (await rootsctl(['explain', 'fs'], { env })).out,
    /^fs: 2 roots\nWHERE +KIND +RULE +YIELDED\n/,
  );
  t.match(await rootsctl(['reload'], { env }), {
    code: 0,
    out: /^policy reloaded \(revision \d+\)/,
  });

  const granted = await rootsctl(['grant', 'fs', 'proj-evil', '--for', '30m', '--json'], {
    env,
    cwd: home,
  });
  t.equal(granted.code, 0, granted.err);
  t.match(JSON.parse(granted.out), { grant: { server: 'fs', readOnly: false } });
  t.match(
    (await rootsctl(['grants'], { env })).out,
    /^SERVER +PATH +ACCESS +EXPIRES +LEFT\nfs +.*proj-evil +read-write +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d +(29|30)m\n$/,
  );
  // A name no entry covers is most likely a typo: said, with the nearest name, on stderr.
  const typo = await rootsctl(['grant', 'fss', 'proj-evil', '--for', '1m'], { env, cwd: home });
  t.equal(typo.code, 0, 'granted all the same: a server may live on grants alone');
  t.match(
    typo.err,
    'rootsctl: note: no entry of the policy names "fss": this grant is all it has. Did you mean "fs"?',
  );
  t.equal((await rootsctl(['revoke', 'fss'], { env })).code, 0);
  for (const command of [
    ['check', 'fss', join(home, 'proj/x')],
    ['explain', 'fss'],
  ]) {
    const r = await rootsctl(command, { env });
    t.match(r.err, 'No entry of the policy names "fss" (deny by default). Did you mean "fs"?');
  }
  t.equal((await rootsctl(['check', 'fs', join(home, 'proj/x')], { env })).err, '', 'none for fs');
  t.match(await rootsctl(['grant', 'fs', 'nope'], { env, cwd: home }), {
    code: 1,
    err: /does not exist/,
  });
  t.match(await rootsctl(['grant', 'fs', 'proj', '--for', 'soon'], { env, cwd: home }), {
    code: 2,
    err: /not a duration/,
  });
  // A time in the past says what to give instead.
  t.match(
    await rootsctl(['grant', 'fs', 'proj', '--until', '2020-01-01T00:00:00Z'], { env, cwd: home }),
    { code: 2, err: /is in the past \(it is \S+ now\): give a later time, or a duration/ },
  );
  t.match(await rootsctl(['grant', 'f*', 'proj'], { env, cwd: home }), {
    code: 2,
    err: /names one server exactly/,
  });
  t.match(await rootsctl(['revoke', 'fs'], { env }), { code: 0, out: 'revoked 1 grant of fs\n' });
  // Nothing left to revoke: the roots are the policy's, in the file this daemon serves (not the
  // default one, which `edit` alone would open).
  t.match(await rootsctl(['revoke', 'fs'], { env }), {
    code: 1,
    out: `roots the policy gives are changed with \`rootsctl --config ${join(dir, 'p.yaml')} edit\`)`,
  });

  t.match(await rootsctl(['lockdown'], { env }), {
    code: 0,
    out: /^lockdown on: .* ends it, and brings back the grants that have not expired/,
  });
  t.match((await rootsctl(['status'], { env })).out, /LOCKDOWN/);
  t.equal((await rootsctl(['check', 'fs', join(home, 'proj/x')], { env })).code, 1);
  t.match(await rootsctl(['unlock'], { env }), { code: 0, out: /^lockdown off/ });

  writeFileSync(join(dir, 'p.yaml'), 'version: 1\nservers: {fs: {roots: [{path: 1}]}}\n');
  const broken = await rootsctl(['reload'], { env });
  t.equal(broken.code, 1);
  t.match(broken.out, /^error: .*p\.yaml:2:/);
  const brokenStatus = await rootsctl(['status'], { env });
  t.equal(brokenStatus.code, 1, 'status exits 1 while the policy on disk has errors');
  t.match(brokenStatus.out, /ERROR: {4}.*p\.yaml:2:\d+: /);
});

void t.test('watch prints each change until interrupted', async (t) => {
  const { dir, home } = tree();
  const d = await startDaemon(t, undefined, { dir, configFile: join(dir, 'p.yaml'), home });
  const env = { HOME: home, MCP_ROOTS_SOCKET: d.socket };
  let stop!: () => void;
  const stopped = new Promise<void>((r) => (stop = r));
  let out = '';
  const code = main(['watch', 'fs', '--json'], {
    out: (s) => (out += s),
    err: () => undefined,
    env,
    cwd: home,
    isTTY: false,
    interrupted: () => stopped,
  });
  await waitFor(() => out !== '', 30_000, 'the first list');
  const c = await d.connect();
  await c.grant('fs', join(home, 'proj-evil'));
  await waitFor(() => out.includes('proj-evil'), 30_000, 'the list after the grant');
  stop();
  t.equal(await code, 0);
  const lines = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { roots: unknown[] });
  t.same(
    lines.map((l) => l.roots.length),
    [2, 3],
  );
});

void t.test('watch of a name no entry covers says so, and follows it anyway', async (t) => {
  const { dir, home } = tree();
  const d = await startDaemon(t, undefined, { dir, configFile: join(dir, 'p.yaml'), home });
  let stop!: () => void;
  const stopped = new Promise<void>((r) => (stop = r));
  let out = '';
  let err = '';
  const code = main(['watch', 'fss'], {
    out: (s) => (out += s),
    err: (s) => (err += s),
    env: { HOME: home, MCP_ROOTS_SOCKET: d.socket },
    cwd: home,
    isTTY: false,
    interrupted: () => stopped,
  });
  await waitFor(() => out !== '', 30_000, 'the first list');
  stop();
  t.equal(await code, 0);
  t.match(err, 'No entry of the policy names "fss" (deny by default). Did you mean "fs"?');
});

void t.test('watch follows the daemon across a restart', async (t) => {
  const { dir, home } = tree();
  const configFile = join(dir, 'p.yaml');
  const d1 = await startDaemon(t, undefined, { dir, configFile, home });
  const env = { HOME: home, MCP_ROOTS_SOCKET: d1.socket };
  let stop!: () => void;
  const stopped = new Promise<void>((r) => (stop = r));
  // Two watchers at once, for people and with --json; each sees its output as it comes.
  const watcher = (json: boolean) => {
    const w = { out: '', err: '', code: undefined as Promise<number> | undefined };
    w.code = main(['watch', 'fs', ...(json ? ['--json'] : [])], {
      out: (s) => (w.out += s),
      err: (s) => (w.err += s),
      env,
      cwd: home,
      isTTY: false,
      interrupted: () => stopped,
    });
    return w;
  };
  const table = watcher(false);
  const json = watcher(true);
  await waitFor(() => table.out !== '' && json.out !== '', 30_000, 'the first lists');
  await d1.close();
  const d2 = await startDaemon(t, undefined, { dir, configFile, home });
  await waitFor(
    () => table.out.includes('following fs again') && json.out.split('\n').length === 3,
    30_000,
    'the lists after the restart',
  );
  const c = await d2.connect();
  await c.grant('fs', join(home, 'proj-evil'));
  await waitFor(
    () => table.out.includes('proj-evil') && json.out.includes('proj-evil'),
    30_000,
    'the change after the restart',
  );
  stop();
  t.equal(await table.code, 0);
  t.equal(await json.code, 0);
  const stamped = table.out.split('\n').filter((l) => l.startsWith('['));
  t.ok(
    stamped.every((l) => /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] /.test(l)),
    'each line stamped with the local time, as rootsctl shows times',
  );
  t.same(
    stamped.map((l) => l.replace(/^\[[^\]]+\] /, '').replace(/\d+$/, 'N')),
    ['revision N', 'mcp-rootsd restarted; following fs again', 'revision N', 'revision N'],
  );
  t.match(table.err, /^rootsctl: lost mcp-rootsd \(.*\); reconnecting\n$/);
  t.same(
    json.out
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { roots: unknown[] }).roots.length),
    [2, 2, 3],
    '--json: list objects only, no extra line',
  );
  t.equal(json.err, '');
});

void t.test('every command says when the daemon is not running, and exits 3', async (t) => {
  const dir = shortDir();
  const env = { HOME: dir, MCP_ROOTS_SOCKET: join(dir, 'none.sock') };
  for (const argv of [
    ['status'],
    ['list', 'fs'],
    ['check', 'fs', '/x'],
    ['explain', 'fs'],
    ['reload'],
    ['grants'],
    ['lockdown'],
  ]) {
    const r = await rootsctl(argv, { env });
    t.equal(r.code, 3, argv.join(' '));
    t.equal(
      r.err,
      `rootsctl: mcp-rootsd is not running (connect ENOENT ${dir}/none.sock). Start it with \`systemctl --user start mcp-rootsd.socket\` (once \`rootsctl install-service\` has run) or \`mcp-rootsd\`. A daemon started on another socket (the demo's, by \`npm start\`) is asked with that --socket.\n`,
    );
  }
});

void t.test('the built binary against a running daemon', async (t) => {
  const { dir, home } = tree();
  const d = await startDaemon(t, undefined, { dir, configFile: join(dir, 'p.yaml'), home });
  const { stdout } = await run(process.execPath, [
    bin('rootsctl'),
    '--socket',
    d.socket,
    'list',
    'fs',
    '--json',
  ]);
  t.equal((JSON.parse(stdout) as { roots: unknown[] }).roots.length, 2);
  const failed = await run(process.execPath, [
    bin('rootsctl'),
    '--socket',
    join(dir, 'x.sock'),
    'status',
  ]).catch((e: { code: number; stderr: string }) => e);
  t.match(failed, { code: 3, stderr: /not running/ });
});

void t.test('grant under an access: write deny says it was made read-only', async (t) => {
  const dir = shortDir();
  mkdirSync(join(dir, 'home/locked'), { recursive: true });
  writeFileSync(join(dir, 'p.yaml'), 'version: 1\ndeny:\n  - {path: ~/locked, access: write}\n');
  const home = join(dir, 'home');
  const d = await startDaemon(t, undefined, { dir, configFile: join(dir, 'p.yaml'), home });
  const env = { HOME: home, MCP_ROOTS_SOCKET: d.socket };
  const r = await rootsctl(['grant', 'fs', 'locked', '--for', '10m'], { env, cwd: home });
  t.equal(r.code, 0, r.err);
  t.match(
    r.out,
    /^granted fs read-only access to ~\/locked until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \((9|10)m\)\nnote: granted read-only: writing .*locked is denied by deny ~\/locked \(access: write\)/,
  );
});

void t.test(
  'a grant of a path that is not there is refused by the daemon, and logged',
  async (t) => {
    // It was refused by rootsctl alone, so the decision log the README promises it in had nothing.
    const dir = shortDir();
    const home = join(dir, 'home');
    mkdirSync(home, { recursive: true });
    writeFileSync(join(dir, 'p.yaml'), 'version: 1\n');
    const d = await startDaemon(t, undefined, { dir, configFile: join(dir, 'p.yaml'), home });
    const env = { HOME: home, MCP_ROOTS_SOCKET: d.socket };
    const r = await rootsctl(['grant', 'fs', 'gone', '--for', '10m'], { env, cwd: home });
    t.equal(r.code, 1);
    t.match(
      r.err,
      `${home}/gone does not exist (ENOENT); a grant needs an existing file or directory`,
    );
    // The daemon writes its log a moment after it answers.
    const refused = /fs +grant REFUSED +~\/gone: .*does not exist/;
    const log = () => rootsctl(['log', '--state-dir', d.stateDir], { env, cwd: home });
    await waitFor(async () => refused.test((await log()).out), 10_000, 'the refusal logged');
  },
);

void t.test('list says when a grant’s writing ends in a root that stays', async (t) => {
  const dir = shortDir();
  const home = join(dir, 'home');
  mkdirSync(join(home, 'docs'), { recursive: true });
  writeFileSync(
    join(dir, 'p.yaml'),
    'version: 1\nservers:\n  fs:\n    roots: [{path: ~/docs, readOnly: true}]\n',
  );
  const d = await startDaemon(t, undefined, { dir, configFile: join(dir, 'p.yaml'), home });
  const env = { HOME: home, MCP_ROOTS_SOCKET: d.socket };
  const granted = await rootsctl(['grant', 'fs', 'docs', '--for', '10m'], { env, cwd: home });
  t.equal(granted.code, 0, granted.err);
  const list = await rootsctl(['list', 'fs'], { env, cwd: home });
  t.match(list.out, /^~\/docs +read-write for (9|10)m, then read-only +- +docs$/m);
});

void t.test('status says when the main policy file is gone', async (t) => {
  const dir = shortDir();
  mkdirSync(join(dir, 'home/w'), { recursive: true });
  const config = join(dir, 'p.yaml');
  writeFileSync(config, 'version: 1\nservers:\n  fs:\n    roots: [{path: ~/w}]\n');
  const home = join(dir, 'home');
  const d = await startDaemon(t, undefined, { dir, configFile: config, home });
  const env = { HOME: home, MCP_ROOTS_SOCKET: d.socket };
  t.notMatch((await rootsctl(['status'], { env })).out, /does not exist/);
  await rootsctl(['grant', 'fs', '~', '--for', '10m'], { env });
  rmSync(config);
  await rootsctl(['reload'], { env });
  const status = await rootsctl(['status'], { env });
  t.match(status.out, `(${config} does not exist: its roots and denies are gone)`);
  t.match(status.out, /fs +1 /, 'the grant remains');
});

void t.test(
  'status says a main file with errors since start is not in force, not that it is gone',
  async (t) => {
    const dir = shortDir();
    mkdirSync(join(dir, 'home/w'), { recursive: true });
    const config = join(dir, 'p.yaml');
    writeFileSync(config, 'version: 1\nservers:\n  fs:\n    roots: [~/w]\n');
    const home = join(dir, 'home');
    const d = await startDaemon(t, undefined, { dir, configFile: config, home });
    const env = { HOME: home, MCP_ROOTS_SOCKET: d.socket };
    t.equal((await rootsctl(['grant', 'fs', '~/w', '--for', '10m'], { env })).code, 0);
    const status = await rootsctl(['status'], { env });
    t.match(
      status.out,
      `(${config} has not loaded since start: its roots and denies are not in force)`,
    );
    t.notMatch(status.out, /does not exist/);
    t.match(status.out, /fs +1 /, 'the grant serves');
  },
);
