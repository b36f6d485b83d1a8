/** Roots reach a server on its command line, in its environment and as its working directory. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, startProxied } from '../helpers/proxied-server.js';
import { ownedShortDir } from '../helpers/proxy.js';

interface Seen {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}

void t.test('{root}, {roots}, --env and --cwd, from the command line and the policy', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['repo', 'docs', 'z']) mkdirSync(join(w, d), { recursive: true });
  const d = await startDaemon(
    t,
    `version: 1
servers:
  git:
    roots:
      - path: ${w}/repo
  many:
    roots:
      - path: ${w}/z
      - path: ${w}/docs
        readOnly: true
      - path: ${w}/repo
  from-policy:
    launch:
      command: ${process.execPath}
      args: [${HOSTILE_SERVER}, "--ro", "{roots:ro}", "--rw", "{roots:rw}"]
      env:
        MCP_TEST_DIRS: "{roots}"
      cwd: "{root}"
    roots:
      - path: ${w}/docs
        readOnly: true
      - path: ${w}/z
`,
    { dir },
  );
  const seen = async (s: { call: (n: string) => Promise<{ text: string }> }): Promise<Seen> =>
    JSON.parse((await s.call('launch')).text) as Seen;

  // A single-repository server: its one root as --repository, and as its working directory.
  const git = await startProxied(t, {
    server: 'git',
    socket: d.socket,
    proxyArgs: ['--cwd', '{root}', '--env', 'MCP_TEST_REPO={root}'],
    command: [process.execPath, HOSTILE_SERVER, '--repository={root}'],
  });
  t.same(await seen(git), {
    argv: [`--repository=${w}/repo`],
    cwd: `${w}/repo`,
    env: { MCP_TEST_REPO: `${w}/repo` },
  });

  // Every root, in the list's order (sorted by path), by kind, and joined with : in a variable.
  const many = await startProxied(t, {
    server: 'many',
    socket: d.socket,
    proxyArgs: ['--env', 'MCP_TEST_DIRS={roots}', '--env=MCP_TEST_RW=rw:{roots:rw}'],
    command: [process.execPath, HOSTILE_SERVER, '{roots}', '--', '{roots:ro}'],
  });
  t.same(await seen(many), {
    argv: [`${w}/docs`, `${w}/repo`, `${w}/z`, '--', `${w}/docs`],
    cwd: process.cwd(),
    env: { MCP_TEST_DIRS: `${w}/docs:${w}/repo:${w}/z`, MCP_TEST_RW: `rw:${w}/repo:${w}/z` },
  });

  // The policy's launch: the host's configuration is only --server.
  const fromPolicy = await startProxied(t, { server: 'from-policy', socket: d.socket });
  t.same(await seen(fromPolicy), {
    argv: ['--ro', `${w}/docs`, '--rw', `${w}/z`],
    cwd: `${w}/docs`,
    env: { MCP_TEST_DIRS: `${w}/docs:${w}/z` },
  });
});
