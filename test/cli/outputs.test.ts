/**
 * What rootsctl prints and how it exits where the old output hid what mattered or said success on
 * failure: --version, explain without no-effect denies, status with its warnings, and a daemon
 * that never had a valid policy.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { starterPolicy } from '../../cli/commands/init.js';
import { paint, useColour } from '../../cli/style.js';
import { bin, REPO } from '../helpers/bin.js';
import { rootsctl } from '../helpers/cli.js';
import { shortDir, startDaemon } from '../helpers/daemon.js';

const run = promisify(execFile);
const VERSION = (
  JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }
).version;

void t.test('--version: rootsctl in-process and built, and mcp-rootsd', async (t) => {
  t.same(await rootsctl(['--version']), { code: 0, out: `${VERSION}\n`, err: '' });
  t.same(await rootsctl(['-V']), { code: 0, out: `${VERSION}\n`, err: '' });
  t.match(await rootsctl(['status', '--version']), { code: 2, err: /--version does not apply/ });
  for (const name of ['rootsctl', 'daemon'] as const) {
    for (const flag of ['--version', '-V']) {
      const r = await run(process.execPath, [bin(name), flag]);
      t.equal(r.stdout, `${VERSION}\n`, `${name} ${flag}`);
    }
  }
});

void t.test('explain shows denies that affect nothing only with --all', async (t) => {
  const dir = shortDir();
  const home = join(dir, 'home');
  mkdirSync(join(home, 'projects', '.ssh'), { recursive: true });
  const config = join(dir, 'p.yaml');
  writeFileSync(config, starterPolicy('roots.schema.json'));
  const env = { HOME: home, XDG_STATE_HOME: join(dir, 'state') };
  const short = await rootsctl(['explain', 'filesystem', '--config', config], { env });
  t.equal(short.code, 0);
  const rows = short.out.split('\n').filter((l) => l.includes('  deny  '));
  t.same(
    rows.filter((l) => l.includes('nothing (')),
    [],
    'the deny rows shown each affect something',
  );
  t.match(rows.join('\n'), /deny\s+\*\*\/\.env\s+in ~\/projects/, 'such as **/.env in the root');
  t.match(
    short.out,
    /\((\d+) deny rules that affect nothing here not shown; --all shows them\)\n$/,
  );
  t.match(short.out, /root\s+~\/projects/);
  const all = await rootsctl(['explain', 'filesystem', '--config', config, '--all'], { env });
  t.match(all.out, /deny\s+~\/\.ssh\s+nothing \(no effect\)/);
  t.notMatch(all.out, 'not shown');
  const hidden = Number(/\((\d+) deny rules/.exec(short.out)![1]);
  t.equal(
    all.out.split('\n').length - short.out.split('\n').length,
    hidden - 1,
    'every hidden row is back, the footer gone',
  );
  const json = await rootsctl(['explain', 'filesystem', '--config', config, '--json'], { env });
  t.equal(
    (JSON.parse(json.out) as { rules: { kind: string }[] }).rules.filter((r) => r.kind === 'deny')
      .length,
    hidden + rows.length,
    '--json keeps every rule',
  );
});

void t.test('status shows each warning itself', async (t) => {
  const dir = shortDir();
  const home = join(dir, 'home');
  mkdirSync(home);
  const d = await startDaemon(
    t,
    'version: 1\nservers:\n  fs:\n    roots: [{path: ~/not-there}]\n  fs2:\n    roots: [{path: ~/not-there}]\n',
    { dir, home },
  );
  const env = { HOME: home, MCP_ROOTS_SOCKET: d.socket };
  const status = await (await d.connect()).status();
  t.ok(status.policy.warnings.length > 0, 'the policy has warnings');
  const r = await rootsctl(['status'], { env });
  t.equal(r.code, 0);
  for (const w of status.policy.warnings)
    t.match(r.out, `warning:  ${d.config}:${w.line}:${w.column}: ${w.message}`);
  t.notMatch(r.out, 'rootsctl validate` lists them');
});

void t.test(
  'a daemon that never had a valid policy says so, and list and reload exit 1',
  async (t) => {
    const dir = shortDir();
    const home = join(dir, 'home');
    mkdirSync(home);
    const d = await startDaemon(t, 'version: 1\nservers: [\n', { dir, home });
    const env = { HOME: home, MCP_ROOTS_SOCKET: d.socket };
    const status = await rootsctl(['status'], { env });
    t.equal(status.code, 1);
    t.match(status.out, 'policy:   none valid since start: every server has no roots');
    t.match(status.out, 'no policy serves until this is fixed');
    t.notMatch(status.out, 'last valid policy keeps serving');
    const list = await rootsctl(['list', 'fs'], { env });
    t.equal(list.code, 1);
    t.match(list.out, /^mcp-rootsd has no valid policy: the policy has 1 error/);
    t.notMatch(list.out, 'names no servers');
    const reload = await rootsctl(['reload'], { env });
    t.equal(reload.code, 1);
    t.match(reload.out, 'no valid policy has loaded since mcp-rootsd started');
  },
);

void t.test('colour only on a terminal, never with NO_COLOR', (t) => {
  const rows: [boolean, Record<string, string>, boolean][] = [
    [true, {}, true],
    [true, { NO_COLOR: '1' }, false],
    [true, { NO_COLOR: '' }, true],
    [true, { TERM: 'dumb' }, false],
    [false, {}, false],
  ];
  for (const [isTTY, env, want] of rows) {
    t.equal(useColour({ isTTY, env }), want, `${isTTY ? 'tty' : 'pipe'} ${JSON.stringify(env)}`);
  }
  t.equal(paint(false).red('x'), 'x');
  t.equal(paint(true).red('x'), '\x1b[31mx\x1b[0m');
  t.end();
});
