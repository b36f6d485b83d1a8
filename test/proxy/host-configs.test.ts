/**
 * The host configurations in examples/hosts/ work as written, with the SDK's hosts of both eras:
 * the filesystem server they start gets the policy's roots. Without `{roots}` on its command line,
 * server-filesystem 2.0.1 in a 2026-07-28 session has no directories at all (that revision gives
 * roots only to a server that asks in a request), and every call failed.
 */
import { mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { FS2_SERVER, startEraHost, type HostKind } from '../helpers/era-host.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { repoPath } from '../helpers/repo.js';

const CONFIGS = [
  'examples/hosts/claude-desktop/claude_desktop_config.json',
  'examples/hosts/vscode/.vscode/mcp.json',
  'examples/hosts/cursor/.cursor/mcp.json',
  'examples/hosts/claude-code/.mcp.json',
];

/** What `npx -y` fetches of the server today, run from node_modules instead of the network. */
const NPX_SERVER = ['npx', '-y', '@modelcontextprotocol/server-filesystem'];

interface Entry {
  command: string;
  args: string[];
}

/** Each file's `filesystem` entry (VS Code calls the list `servers`, the others `mcpServers`). */
function entries(): Entry[] {
  return CONFIGS.map((file) => {
    const json = JSON.parse(readFileSync(repoPath(file), 'utf8')) as {
      mcpServers?: Record<string, Entry>;
      servers?: Record<string, Entry>;
    };
    const entry = (json.mcpServers ?? json.servers)?.filesystem;
    if (!entry) throw new Error(`${file}: no filesystem entry`);
    return entry;
  });
}

void t.test('every example host configuration starts the server the same way', (t) => {
  const all = entries();
  for (const [i, e] of all.entries()) {
    t.equal(e.command, 'mcp-roots-proxy', `${CONFIGS[i]}`);
    t.same(e.args, all[0]!.args, `${CONFIGS[i]} as the others`);
  }
  const args = all[0]!.args;
  const dashes = args.indexOf('--');
  t.same(args.slice(0, dashes), ['--server', 'filesystem']);
  t.same(args.slice(dashes + 1, dashes + 1 + NPX_SERVER.length), NPX_SERVER);
  t.end();
});

for (const kind of ['v2-pin', 'v1'] as HostKind[]) {
  void t.test(
    `the example configuration with the ${kind} host gets the policy's roots`,
    async (t) => {
      const dir = ownedShortDir(t);
      for (const d of ['a', 'b', 'outside']) mkdirSync(join(dir, d));
      const d = await startDaemon(
        t,
        `version: 1\nservers:\n  filesystem:\n    roots: [{path: ${dir}/a}, {path: ${dir}/b}]\n`,
        { dir },
      );
      const args = entries()[0]!.args;
      const serverArgs = args.slice(args.indexOf('--') + 1 + NPX_SERVER.length);
      const host = await startEraHost(t, {
        kind,
        server: 'filesystem',
        socket: d.socket,
        serverCommand: [process.execPath, FS2_SERVER, ...serverArgs],
      });
      if (kind === 'v2-pin') t.equal(host.version, '2026-07-28');
      const listed = await host.call('list_allowed_directories');
      t.equal(listed.isError, false, listed.text);
      const real = realpathSync(dir);
      t.same(
        listed.text.split('\n').filter((l) => l.startsWith('/')),
        [join(real, 'a'), join(real, 'b')],
        'exactly the policy roots',
      );
      const list = await host.call('list_directory', { path: join(real, 'b') });
      t.equal(list.isError, false, `a root can be listed: ${list.text}`);
      const outside = await host.call('list_directory', { path: join(real, 'outside') });
      t.equal(outside.isError, true, 'outside the roots is refused');
    },
  );
}

void t.test('a 2026-07-28 server that never asks for roots: the log says {roots}', async (t) => {
  const dir = ownedShortDir(t);
  mkdirSync(join(dir, 'a'));
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  filesystem:\n    roots: [{path: ${dir}/a}]\n`,
    {
      dir,
    },
  );
  const HINT =
    /has not asked for roots in this 2026-07-28 session.*put \{roots\} where its directories go/;
  const a = join(realpathSync(dir), 'a');
  for (const [kind, args] of [
    ['v2-pin', []],
    ['v2-pin', ['{roots}']],
    ['v1', []],
  ] as [HostKind, string[]][]) {
    const host = await startEraHost(t, {
      kind,
      server: 'filesystem',
      socket: d.socket,
      serverCommand: [process.execPath, FS2_SERVER, ...args],
    });
    const first = await host.call('list_directory', { path: a });
    await host.call('list_directory', { path: a });
    const said = (host.stderr().match(new RegExp(HINT, 'g')) ?? []).length;
    if (kind === 'v2-pin' && args.length === 0) {
      t.equal(
        first.isError,
        true,
        `without {roots} the 2026 server has no directories: ${first.text}`,
      );
      t.equal(said, 1, 'the proxy says what to do, once');
    } else {
      t.equal(first.isError, false, `${kind} ${args.join(' ')}: the root is listed`);
      t.equal(said, 0, `${kind} ${args.join(' ')}: nothing to say`);
    }
  }
});
