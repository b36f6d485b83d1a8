/**
 * `rootsctl completion`: the bash script run by a real bash with the words of a command line, its
 * server names from the running daemon, else from the policy file; zsh and fish scripts are
 * checked by their shells when installed.
 */
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { bin } from '../helpers/bin.js';
import { rootsctl } from '../helpers/cli.js';
import { shortDir, startDaemon } from '../helpers/daemon.js';

/** A directory with a `rootsctl` on PATH that runs the built one, as an installed one would. */
function shim(dir: string): string {
  const binDir = join(dir, 'bin');
  mkdirSync(binDir, { recursive: true });
  const file = join(binDir, 'rootsctl');
  writeFileSync(
    file,
    `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(bin('rootsctl'))} "$@"\n`,
  );
  chmodSync(file, 0o755);
  return binDir;
}

const run = promisify(execFile);

/**
 * What the bash completion offers for `words` (the last one is being completed). Asynchronously:
 * the daemon answering `complete-servers` runs in this process.
 */
async function complete(
  script: string,
  words: string[],
  env: Record<string, string>,
): Promise<string[]> {
  const program = `${script}
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})
COMP_CWORD=${words.length - 1}
_rootsctl
printf '%s\\n' "\${COMPREPLY[@]}"
`;
  const { stdout } = await run('bash', ['-c', program], { env, encoding: 'utf8' });
  return stdout.split('\n').filter(Boolean).sort();
}

void t.test('bash: commands, options, server names from the daemon, else the policy', async (t) => {
  const dir = shortDir();
  const home = join(dir, 'home');
  mkdirSync(join(home, 'docs'), { recursive: true });
  const config = join(dir, 'mcp-roots.yaml');
  writeFileSync(
    config,
    'version: 1\nservers:\n  filesystem:\n    roots: [{path: ~/docs}]\n  fetcher:\n    roots: []\n  "web-*":\n    roots: []\n',
  );
  const script = (await rootsctl(['completion', 'bash'])).out;
  const PATH = `${shim(dir)}:${process.env.PATH ?? ''}`;
  // No daemon: the names come from the policy file (a pattern is not offered).
  const offline = {
    PATH,
    HOME: home,
    MCP_ROOTS_CONFIG: config,
    MCP_ROOTS_SOCKET: join(dir, 'none.sock'),
  };
  t.same(await complete(script, ['rootsctl', 'sta'], offline), ['status']);
  t.same(await complete(script, ['rootsctl', 'd'], offline), ['doctor']);
  t.same(await complete(script, ['rootsctl', 'list', 'f'], offline), ['fetcher', 'filesystem']);
  t.same(await complete(script, ['rootsctl', 'explain', '--a'], offline), ['--all']);
  t.same(await complete(script, ['rootsctl', 'grant', '--u'], offline), ['--until']);
  t.same(await complete(script, ['rootsctl', 'completion', ''], offline), ['bash', 'fish', 'zsh']);
  t.same(
    await complete(script, ['rootsctl', 'check', '--socket', '/x', 'fi'], offline),
    ['filesystem'],
    'an option value is not counted as an argument',
  );
  // A running daemon answers instead, with the policy it serves.
  const d = await startDaemon(t, 'version: 1\nservers:\n  live-one:\n    roots: []\n', {
    dir,
    home,
    configFile: join(dir, 'served.yaml'),
  });
  const online = { ...offline, MCP_ROOTS_SOCKET: d.socket };
  t.same(await complete(script, ['rootsctl', 'watch', ''], online), ['live-one']);
});

void t.test('zsh and fish scripts; an unknown shell is a usage error', async (t) => {
  for (const shell of ['zsh', 'fish']) {
    const r = await rootsctl(['completion', shell]);
    t.equal(r.code, 0);
    t.match(r.out, 'rootsctl complete-servers');
    const installed = spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;
    if (!installed) continue;
    const check = spawnSync(shell, ['-n'], { input: r.out, encoding: 'utf8' });
    t.equal(check.status, 0, `${shell} -n: ${check.stderr}`);
  }
  t.match(await rootsctl(['completion', 'tcsh']), {
    code: 2,
    err: 'completion is for bash, zsh, fish; not "tcsh"',
  });
  const bash = await rootsctl(['completion', 'bash']);
  const syntax = spawnSync('bash', ['-n'], { input: bash.out, encoding: 'utf8' });
  t.equal(syntax.status, 0, syntax.stderr);
});
