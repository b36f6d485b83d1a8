/**
 * A sandboxed server whose command is found through a link in a directory the sandbox does not
 * show, as pipx installs one (`~/.local/bin/x`, a link into its virtual environment): the gate
 * inside found no such command and the server exited 127. The link is made again inside, leading
 * to the program's file, which the sandbox shows; the directory of links stays hidden.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, startProxied } from '../helpers/proxied-server.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { fixtureServer } from '../helpers/repo.js';

void t.test('a command on PATH through a link the sandbox does not show', async (t) => {
  const dir = ownedShortDir(t);
  const venv = join(dir, 'venvs/srv/bin');
  mkdirSync(venv, { recursive: true });
  writeFileSync(
    join(venv, 'cli.mjs'),
    `#!/usr/bin/env node\n${readFileSync(HOSTILE_SERVER, 'utf8')}`,
  );
  writeFileSync(join(venv, 'parent-watch.mjs'), readFileSync(fixtureServer('parent-watch.mjs')));
  chmodSync(join(venv, 'cli.mjs'), 0o755);
  // Its package, which the sandbox shows with the script.
  writeFileSync(join(dir, 'venvs/srv/package.json'), '{"name": "srv", "type": "module"}');
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  symlinkSync('../venvs/srv/bin/cli.mjs', join(bin, 'mcp-server-srv'));
  // Beside the link, something the sandbox must still not show.
  writeFileSync(join(bin, 'secret'), 'not for the server');
  mkdirSync(join(dir, 'root'));
  const d = await startDaemon(t, `version: 1\nservers:\n  s:\n    roots: [{path: ${dir}/root}]\n`, {
    dir,
  });
  // And a name under a linked directory (a PATH entry `~/bin` leading into a dotfiles
  // repository), which leads elsewhere though it is no link itself (an attacker pass).
  symlinkSync(bin, join(dir, 'linked-bin'));
  symlinkSync(venv, join(dir, 'linked-venv'));
  for (const command of [
    'mcp-server-srv',
    join(bin, 'mcp-server-srv'),
    join(dir, 'linked-bin/mcp-server-srv'),
    join(dir, 'linked-venv/cli.mjs'),
  ]) {
    const s = await startProxied(t, {
      server: 's',
      socket: d.socket,
      proxyArgs: ['--sandbox'],
      command: [command, '{roots}'],
      env: { PATH: `${bin}:${process.env.PATH ?? ''}` },
    });
    const launched = JSON.parse((await s.call('launch')).text) as { argv: string[] };
    t.same(launched.argv, [`${dir}/root`], `${command}: the server runs in its sandbox`);
    t.match(s.stderr(), /in its sandbox/, `${command}: sandboxed`);
    const [where, name] = command.includes('/')
      ? [dirname(command), basename(command)]
      : [bin, command];
    const listed = await s.call('attempt', { action: 'shell', ref: `ls -A ${where}` });
    t.equal(
      listed.text.trim(),
      `ok: status 0\n${name}`,
      `${command}: only the link is shown there`,
    );
    await s.client.close();
  }
});

// pipx's and `uv tool`'s installs: a script whose `#!` line names its virtual environment's
// `bin/python3`, a link to a Python elsewhere (pyenv's `versions/X/bin/python3`, itself a link).
// Inside, the environment was not shown, nor the links on the way, and the script was "not found".
void t.test('a Python script in a virtual environment, through links on the way', async (t) => {
  const dir = ownedShortDir(t);
  const version = execFileSync('/usr/bin/python3', [
    '-c',
    'import sys; print(f"python{sys.version_info[0]}.{sys.version_info[1]}")',
  ])
    .toString()
    .trim();
  // A Python "installation" of links, as pyenv's shims and versions lead on.
  mkdirSync(join(dir, 'pythons/bin'), { recursive: true });
  symlinkSync('/usr/bin/python3', join(dir, 'pythons/bin/python3'));
  writeFileSync(join(dir, 'pythons/bin/secret'), 'not for the server');
  const venv = join(dir, 'venvs/where');
  mkdirSync(join(venv, 'bin'), { recursive: true });
  writeFileSync(
    join(venv, 'pyvenv.cfg'),
    'home = /usr/bin\ninclude-system-site-packages = false\n',
  );
  symlinkSync(join(dir, 'pythons/bin/python3'), join(venv, 'bin/python3'));
  const site = join(venv, 'lib', version, 'site-packages');
  mkdirSync(site, { recursive: true });
  writeFileSync(join(site, 'venv_marker.py'), "VALUE = 'from the environment'\n");
  const script = join(venv, 'bin/mcp-where');
  writeFileSync(
    script,
    `#!${join(venv, 'bin/python3')}\n${readFileSync(fixtureServer('where.py'), 'utf8')}`,
  );
  chmodSync(script, 0o755);
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  symlinkSync(script, join(bin, 'mcp-where'));
  mkdirSync(join(dir, 'root'));
  const d = await startDaemon(t, `version: 1\nservers:\n  s:\n    roots: [{path: ${dir}/root}]\n`, {
    dir,
  });
  const s = await startProxied(t, {
    server: 's',
    socket: d.socket,
    proxyArgs: ['--sandbox'],
    command: ['mcp-where'],
    env: {
      PATH: `${bin}:${process.env.PATH ?? ''}`,
      MCP_TEST_LIST: join(dir, 'pythons/bin'),
    },
  });
  t.match(s.stderr(), /in its sandbox/, 'sandboxed');
  t.same(
    JSON.parse((await s.call('where')).text),
    { prefix: venv, marker: 'from the environment', listed: ['python3'] },
    'the script runs in its environment, with its packages; of the links, only the one on the way',
  );
});
