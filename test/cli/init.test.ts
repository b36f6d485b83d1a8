import {
  existsSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
  lstatSync,
} from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { main } from '../../cli/run.js';
import type { Io } from '../../cli/io.js';
import { packageRoot } from '../../common/package-info.js';

function capture(env: Io['env'], cwd: string) {
  const out: string[] = [];
  const err: string[] = [];
  const io: Io = { out: (s) => out.push(s), err: (s) => err.push(s), env, cwd, isTTY: false };
  return { io, out: () => out.join(''), err: () => err.join('') };
}

/** A home and an XDG config directory in a fresh fixture. */
function setup(t: Test) {
  const dir = t.testdir({ home: { projects: { app: {} } }, config: {} });
  const env = {
    HOME: join(dir, 'home'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    PATH: process.env.PATH,
  };
  return { dir, env, file: join(dir, 'config', 'mcp-roots.yaml') };
}

const NEXT =
  'Next: edit it (one server, filesystem, sees ~/projects read-only), check it with `rootsctl validate`,\n' +
  'and run the daemon: `rootsctl install-service` (systemd), or `mcp-rootsd` in a terminal.\n';

void t.test('init writes a starter policy that validates', async (t) => {
  const { dir, env, file } = setup(t);
  const run = capture(env, dir);
  t.equal(await main(['init'], run.io), 0);
  t.equal(run.out(), `wrote ${file}\n${NEXT}`);
  t.equal(run.err(), '');

  const text = readFileSync(file, 'utf8');
  const schema = join(packageRoot(), 'roots.schema.json');
  t.equal(text.split('\n')[0], `# yaml-language-server: $schema=${schema}`);
  t.ok(existsSync(schema), 'the $schema line names a file that exists');
  // The wiring it suggests works for a 2026-07-28 host too, which gives the server no roots.
  t.match(text, '-- npx -y @modelcontextprotocol/server-filesystem {roots}\n');
  for (const secret of [
    '~/.ssh',
    '~/.gnupg',
    '~/.aws',
    '~/.config/gcloud',
    '~/.kube',
    '~/.docker/config.json',
    '~/.netrc',
    '~/.password-store',
    '~/.mozilla',
    '~/.config/google-chrome',
    '~/.config/chromium',
    "'**/.env'",
  ]) {
    t.match(text, `\n  - ${secret}\n`, `denies ${secret}`);
  }

  const validate = capture(env, dir);
  t.equal(await main(['validate', '--json'], validate.io), 0, validate.err());
  const result = JSON.parse(validate.out()) as { ok: boolean; errors: unknown[]; files: string[] };
  t.equal(result.ok, true);
  t.same(result.errors, []);
  t.same(result.files, [file]);

  // The example server sees ~/projects read-only, and no secret.
  const home = env.HOME;
  const cases: [string, string[], number][] = [
    ['read in ~/projects', ['check', 'filesystem', join(home, 'projects/app/x.ts')], 0],
    ['write in ~/projects', ['check', 'filesystem', join(home, 'projects/app/x.ts'), '--write'], 1],
    ['an ssh key', ['check', 'filesystem', join(home, '.ssh/id_ed25519')], 1],
    ['an .env file', ['check', 'filesystem', join(home, 'projects/app/.env')], 1],
    ['another server', ['check', 'other', join(home, 'projects/app/x.ts')], 1],
  ];
  for (const [what, args, code] of cases) {
    const check = capture(env, dir);
    t.equal(await main([...args, '--config', file], check.io), code, what);
  }
});

void t.test('init never overwrites without --force', async (t) => {
  const { dir, env, file } = setup(t);
  writeFileSync(file, 'version: 1\n# mine\n');
  const run = capture(env, dir);
  t.equal(await main(['init'], run.io), 1);
  t.equal(run.out(), '');
  t.equal(
    run.err(),
    `rootsctl: ${file} already exists; not overwriting it. Edit it, or run \`rootsctl init --force\` to replace it with the starter policy.\n`,
  );
  t.equal(readFileSync(file, 'utf8'), 'version: 1\n# mine\n');

  const forced = capture(env, dir);
  t.equal(await main(['init', '--force'], forced.io), 0);
  t.match(readFileSync(file, 'utf8'), /^# yaml-language-server: \$schema=/);
});

void t.test('init --force writes through a symlinked policy file, keeping the link', async (t) => {
  const { dir, env, file } = setup(t);
  mkdirSync(join(dir, 'dotfiles'));
  const target = join(dir, 'dotfiles', 'mcp-roots.yaml');
  writeFileSync(target, 'version: 1\n');
  symlinkSync(target, file);
  const run = capture(env, dir);
  t.equal(await main(['init', '--force'], run.io), 0, run.err());
  t.ok(lstatSync(file).isSymbolicLink());
  t.match(readFileSync(target, 'utf8'), /^# yaml-language-server/);
});

void t.test('init --config FILE writes there, creating its directory', async (t) => {
  const { dir, env } = setup(t);
  const run = capture(env, dir);
  t.equal(await main(['init', '--config', 'elsewhere/policy.yaml'], run.io), 0, run.err());
  const file = join(dir, 'elsewhere', 'policy.yaml');
  // The hint checks the file written, not the default policy.
  t.equal(
    run.out(),
    `wrote ${file}\n${NEXT.replace('rootsctl validate', `rootsctl --config ${file} validate`)}`,
  );
  t.ok(existsSync(file));
  t.notOk(existsSync(join(dir, 'config', 'mcp-roots.yaml')));
});

void t.test('init takes MCP_ROOTS_CONFIG like every other command', async (t) => {
  const { dir, env } = setup(t);
  const file = join(dir, 'from-env.yaml');
  const run = capture({ ...env, MCP_ROOTS_CONFIG: file }, dir);
  t.equal(await main(['init'], run.io), 0, run.err());
  t.ok(existsSync(file));
});
