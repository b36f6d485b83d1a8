/**
 * rootsctl's code cache is code the person runs on every command (cli/code-cache.ts): an agent
 * that could write it would run its code as the person, outside any sandbox, the next time they
 * type `rootsctl status`. So `~/.cache/mcp-roots` and `$XDG_CACHE_HOME/mcp-roots` are protected
 * paths (policies/protected.ts): through the enforcing proxy and the real filesystem server, no
 * write, directory, move or staged folder reaches them, under a root that allows writes around
 * them; their neighbours stay writable.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, startProxiedFs, waitFor } from '../helpers/proxy.js';

const CACHE = `rootsctl-0123456789abcdef-${process.version}-x64-status.v8`;

interface Row {
  what: string;
  tool: string;
  /** Arguments; `~` is the daemon's home, `$X` its XDG_CACHE_HOME. */
  args: Record<string, string>;
  allowed: boolean;
}

const ROWS: Row[] = [
  {
    what: 'write a cache file',
    tool: 'write_file',
    args: { path: `~/.cache/mcp-roots/${CACHE}`, content: 'x' },
    allowed: false,
  },
  {
    what: 'write one in XDG_CACHE_HOME',
    tool: 'write_file',
    args: { path: `$X/mcp-roots/${CACHE}`, content: 'x' },
    allowed: false,
  },
  {
    what: 'a temporary name beside it',
    tool: 'write_file',
    args: { path: `~/.cache/mcp-roots/.${CACHE}.1`, content: 'x' },
    allowed: false,
  },
  {
    what: 'edit one',
    tool: 'edit_file',
    args: { path: `~/.cache/mcp-roots/${CACHE}`, edits: '[]' },
    allowed: false,
  },
  {
    what: 'make the directory',
    tool: 'create_directory',
    args: { path: '$X/mcp-roots' },
    allowed: false,
  },
  {
    what: 'stage a folder into place',
    tool: 'move_file',
    args: { source: '~/stage', destination: '~/.cache/mcp-roots' },
    allowed: false,
  },
  {
    what: 'stage into XDG_CACHE_HOME',
    tool: 'move_file',
    args: { source: '~/stage', destination: '$X/mcp-roots' },
    allowed: false,
  },
  {
    what: 'move ~/.cache away (to bring another back)',
    tool: 'move_file',
    args: { source: '~/.cache', destination: '~/cache-old' },
    allowed: false,
  },
  {
    what: 'a folder to a neighbour of ~/.cache',
    tool: 'move_file',
    args: { source: '~/stage', destination: '~/.cache2' },
    allowed: true,
  },
  {
    what: 'a cache file onto the path',
    tool: 'move_file',
    args: { source: '~/planted.v8', destination: `$X/mcp-roots/${CACHE}` },
    allowed: false,
  },
  // neighbours
  {
    what: 'another program cache',
    tool: 'write_file',
    args: { path: '~/.cache/other/x', content: 'x' },
    allowed: true,
  },
  {
    what: 'a name that only starts alike',
    tool: 'write_file',
    args: { path: '~/.cache/mcp-roots-notes', content: 'x' },
    allowed: true,
  },
];

void t.test('rootsctl code cache is out of servers reach', async (t) => {
  const dir = ownedShortDir(t);
  const home = join(dir, 'home');
  const xdg = join(dir, 'xdg');
  for (const d of ['home/.cache/mcp-roots', 'home/.cache/other', 'home/stage', 'xdg']) {
    mkdirSync(join(dir, d), { recursive: true });
  }
  writeFileSync(join(home, 'stage', CACHE), 'planted');
  writeFileSync(join(home, 'planted.v8'), 'planted');
  const before = process.env.XDG_CACHE_HOME;
  process.env.XDG_CACHE_HOME = xdg;
  t.teardown(() => {
    if (before === undefined) delete process.env.XDG_CACHE_HOME;
    else process.env.XDG_CACHE_HOME = before;
  });
  const policy = `version: 1\nservers:\n  fs:\n    readOnly: false\n    roots:\n      - path: ${home}\n      - path: ${xdg}\n`;
  const d = await startDaemon(t, policy, { dir });
  const fs = await startProxiedFs(t, { server: 'fs', socket: d.socket });
  await waitFor(async () => (await fs.allowed()).length === 2, 30_000, 'the first list');
  const expand = (v: string) => v.replace(/^~/, home).replace(/^\$X/, xdg);
  for (const row of ROWS) {
    const args = Object.fromEntries(
      Object.entries(row.args).map(([k, v]) => [k, k === 'edits' ? JSON.parse(v) : expand(v)]),
    ) as Record<string, unknown>;
    const r = await fs.call(row.tool, args);
    if (row.allowed) t.equal(r.isError, false, `${row.what}: allowed (${r.text})`);
    else t.match(r.text, /^mcp-roots-proxy refused .*protected/, `${row.what}: refused`);
  }
  t.notOk(existsSync(join(home, '.cache/mcp-roots', CACHE)), 'no cache file was planted');
  t.notOk(existsSync(join(xdg, 'mcp-roots')), 'nothing was made in XDG_CACHE_HOME');
});
