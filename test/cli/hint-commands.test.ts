/**
 * The built rootsctl names commands in its hints the way the person can run them: from a clone
 * with nothing installed, `node dist/cli/main.js` (the README's Quick start) and `node
 * dist/daemon/main.js`, with the `--socket` they gave; from elsewhere, the absolute path; with
 * this installation on PATH, `rootsctl` and `mcp-rootsd`; under npm exec, `npx rootsctl`.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { bin, REPO } from '../helpers/bin.js';
import { shortDir } from '../helpers/short-dir.js';

const exec = promisify(execFile);

async function run(
  args: string[],
  opts: { cwd: string; env: Record<string, string> },
): Promise<{ code: number; out: string; err: string }> {
  try {
    const r = await exec(process.execPath, [bin('rootsctl'), ...args], {
      cwd: opts.cwd,
      env: { HOME: opts.env.HOME ?? '/nonexistent', ...opts.env },
    });
    return { code: 0, out: r.stdout, err: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, out: e.stdout, err: e.stderr };
  }
}

const dir = shortDir();
const onPath = join(dir, 'bin');
mkdirSync(onPath);
symlinkSync(bin('rootsctl'), join(onPath, 'rootsctl'));
symlinkSync(bin('daemon'), join(onPath, 'mcp-rootsd'));
// `node` must stay reachable for the symlinked files' #! line; it adds no rootsctl.
const nodeDir = dirname(process.execPath);
const sock = join(dir, 'none.sock');

const CASES: {
  name: string;
  cwd: string;
  env: Record<string, string>;
  ctl: string;
  daemon: string;
}[] = [
  {
    name: 'in a clone, nothing installed',
    cwd: REPO,
    env: { PATH: nodeDir },
    ctl: 'node dist/cli/main.js',
    daemon: 'node dist/daemon/main.js',
  },
  {
    name: 'elsewhere, nothing installed',
    cwd: dir,
    env: { PATH: nodeDir },
    ctl: `node ${bin('rootsctl')}`,
    daemon: `node ${bin('daemon')}`,
  },
  {
    name: 'installed on PATH',
    cwd: dir,
    env: { PATH: `${onPath}:${nodeDir}` },
    ctl: 'rootsctl',
    daemon: 'mcp-rootsd',
  },
  {
    name: 'under npm exec',
    cwd: REPO,
    env: { PATH: `${onPath}:${nodeDir}`, npm_command: 'exec' },
    ctl: 'npx rootsctl',
    daemon: 'npx mcp-rootsd',
  },
];

for (const [i, c] of CASES.entries()) {
  void t.test(c.name, async (t) => {
    const home = join(dir, `home-${i}`);
    mkdirSync(home);
    const env = { ...c.env, HOME: home };
    const usage = await run(['lst'], { cwd: c.cwd, env });
    t.equal(usage.code, 2);
    t.equal(
      usage.err,
      `rootsctl: unknown command "lst" (did you mean "list"?)\nRun \`${c.ctl} --help\` for the commands.\n`,
    );

    const away = await run(['--socket', sock, 'status'], { cwd: c.cwd, env });
    t.equal(away.code, 3, 'not running: exit 3');
    t.equal(
      away.err,
      `rootsctl: mcp-rootsd is not running (connect ENOENT ${sock}). Start it with \`${c.daemon} --socket ${sock}\` and the --config and --state-dir you run it with; for the demo, \`npm start\` in its repository.\n`,
      'the daemon on the socket given, as the person can start it',
    );

    const init = await run(['init'], { cwd: c.cwd, env });
    t.equal(init.code, 0);
    t.match(init.out, `check it with \`${c.ctl} validate\``);
    t.match(init.out, `\`${c.ctl} install-service\` (systemd), or \`${c.daemon}\` in a terminal`);
    const again = await run(['init'], { cwd: c.cwd, env });
    t.match(again.err, `run \`${c.ctl} init --force\``);
    await run(['init', '--force'], { cwd: c.cwd, env });

    const doctor = await run(['--socket', sock, 'doctor'], { cwd: c.cwd, env });
    t.match(doctor.out, `fix: run ${c.daemon} --socket ${sock}`);
  });
}
