/**
 * How the built rootsctl starts (cli/cached-main.ts): `--version` and `--help` answered before
 * any bundle is read, and every other command run from the bundle that holds only its own
 * module of cli/commands/ (scripts/bundle.mjs). Each must answer as `main` itself does.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import t from 'tap';
import { commandWord } from '../../cli/command-word.js';
import { SPECS } from '../../cli/commands/spec.js';
import { OPTIONS } from '../../cli/options.js';
import { quickAnswer } from '../../cli/quick-answer.js';
import { bin, REPO } from '../helpers/bin.js';
import { rootsctl } from '../helpers/cli.js';

void t.test('each main.js runs its bin, a CommonJS file', (t) => {
  // A `.js` file of this "type": "module" package would start through Node's ES module loader;
  // the links make `node dist/cli/main.js` and `node dist/proxy/main.js` (the README's forms)
  // start as the bins do.
  const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
  };
  for (const [name, built] of [
    ['rootsctl', 'rootsctl'],
    ['mcp-roots-proxy', 'proxy'],
  ] as const) {
    const target = join(REPO, pkg.bin[name]!);
    t.match(target, /\.cjs$/, name);
    t.equal(realpathSync(bin(built)), realpathSync(target), name);
  }
  t.end();
});

void t.test('the command word is the first positional parseArgs finds', (t) => {
  const lines = [
    [],
    ['status'],
    ['--json', 'status'],
    ['--socket', 'status', 'list', 'fs'],
    ['--socket=status', 'list', 'fs'],
    ['--config', 'check', 'explain', 'fs'],
    ['--state-dir', 'x', '--json', 'validate'],
    ['-f', 'log'],
    ['-h'],
    ['-fh', 'log'],
    ['--for', '1h', 'grant', 'fs', '/tmp'],
    ['--until=2h', '--name', 'grant', 'grant', 'fs', '/tmp'],
    ['--', 'status'],
    ['--json', '--', '--version'],
    ['--json', '--'],
    ['-'],
    ['validate', '--config', 'x.yaml'],
    ['--server', 'log', '--since', '1h', 'log'],
    ['--write', 'check', 'fs', '/tmp'],
  ];
  for (const args of lines) {
    const { positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true });
    t.equal(commandWord(args), positionals[0], JSON.stringify(args));
  }
  t.end();
});

void t.test('the quick answers are main own', async (t) => {
  for (const args of [['--version'], ['-V'], ['--help'], ['-h'], ['help']]) {
    const { code, out } = await rootsctl(args);
    t.equal(code, 0);
    t.equal(quickAnswer(args), out, args.join(' '));
  }
  for (const args of [[], ['--version', 'status'], ['--help', '--bogus'], ['status'], ['-Vh']]) {
    t.equal(quickAnswer(args), undefined, JSON.stringify(args));
  }
  t.end();
});

void t.test('the built rootsctl runs every command from a bundle that holds it', async (t) => {
  const dir = t.testdir({ home: {}, cache: {}, state: {} });
  const policy = join(dir, 'policy.yaml');
  writeFileSync(policy, `version: 1\nservers:\n  fs:\n    roots: [{ path: ${dir}/home }]\n`);
  const socket = join(dir, 'nobody.sock');
  const env = {
    HOME: join(dir, 'home'),
    XDG_CACHE_HOME: join(dir, 'cache'),
    XDG_CONFIG_HOME: join(dir, 'home', '.config'),
    PATH: process.env.PATH,
    EDITOR: 'true',
  };
  const run = (args: string[]) =>
    spawnSync(process.execPath, [bin('rootsctl'), ...args], { env, cwd: dir, encoding: 'utf8' });
  // One line per command; those that need the daemon find none. `main` in-process says what
  // each should answer.
  const lines: string[][] = [
    ['status', '--socket', socket],
    ['reload', '--socket', socket],
    ['lockdown', '--socket', socket],
    ['unlock', '--socket', socket],
    ['list', 'fs', '--socket', socket],
    ['--socket', socket, 'check', 'fs', dir],
    ['explain', 'fs', '--config', policy],
    ['validate', policy],
    ['watch', 'fs', '--socket', socket],
    ['grant', 'fs', dir, '--socket', socket],
    ['revoke', 'fs', '--socket', socket],
    ['grants', '--socket', socket],
    ['init', '--force', '--config', join(dir, 'new.yaml')],
    ['edit', '--config', policy],
    ['log', '--state-dir', join(dir, 'state')],
    ['install-service', '--dry-run'],
    ['uninstall-service', '--dry-run'],
    ['completion', 'bash'],
    ['complete-servers', '--config', policy],
    ['doctor', '--config', policy, '--socket', socket, '--json'],
  ];
  const covered = new Set(lines.map((args) => commandWord(args)));
  t.same(
    Object.keys(SPECS).filter((c) => !covered.has(c)),
    [],
    'a line for every command',
  );
  for (const args of lines) {
    const r = run(args);
    const name = args.join(' ');
    t.notMatch(r.stderr, /does not hold/, name);
    t.equal(r.status, (await rootsctl(args, { env, cwd: dir })).code, `${name}: ${r.stderr}`);
  }
  t.end();
});
