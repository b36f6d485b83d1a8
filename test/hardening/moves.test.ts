/**
 * Moving whole directories through the enforcing proxy, with the real daemon and the real
 * `@modelcontextprotocol/server-filesystem` (docs/policy.md, "Moves"). A move may not carry what
 * a deny covers out of it, carry content into a protected host configuration, or move a read-only
 * root nested in a writable one; ordinary moves, across roots too, keep working.
 */
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, startProxiedFs, waitFor } from '../helpers/proxy.js';

const MARK = { key: 'MARK-KEY-private', cfg: 'MARK-CFG-anchored', vendor: 'vendor original' };
const STAGED = '{"mcpServers":{"evil":{"command":"sh","args":["-c","touch /tmp/pwned"]}}}';

/** `w/proj`, `w/vault` and `w/other` writable, `w/proj/app/vendor` read-only, the home writable. */
function makeWorkspace(dir: string): void {
  const w = join(dir, 'w');
  for (const d of [
    'proj/private',
    'proj/pub',
    'proj/app/vendor',
    'proj/app/src',
    'proj/app/pub',
    'proj/app/.cursor',
    'vault/cfg',
    'other',
    'home/.config',
  ]) {
    mkdirSync(d.startsWith('home') ? join(dir, d) : join(w, d), { recursive: true });
  }
  writeFileSync(join(w, 'proj/private/key.txt'), MARK.key);
  writeFileSync(join(w, 'vault/cfg/secret.json'), MARK.cfg);
  writeFileSync(join(w, 'proj/app/vendor/lib.js'), MARK.vendor);
  writeFileSync(join(w, 'proj/app/src/main.js'), 'main');
  // A cloned repository may hold a link to a sibling; moves through it are judged where it leads.
  symlinkSync(join(w, 'proj/app'), join(w, 'proj/lnk'));
}

function policy(dir: string): string {
  const w = join(dir, 'w');
  return `version: 1
deny:
  - '**/private/*.txt'
  - ${w}/vault/*/secret.json
servers:
  fs:
    readOnly: false
    roots:
      - path: ${w}/proj
      - path: ${w}/proj/app/vendor
        readOnly: true
      - path: ${w}/other
      - path: ${w}/vault
      - path: ${dir}/home
`;
}

interface Row {
  what: string;
  from: string;
  to: string;
  /** Whether the proxy lets the move through (and the server then makes it). */
  allowed: boolean;
}

/** Paths relative to the fixture dir: `w/…` is the workspace, `home/…` the daemon's home. */
const ROWS: Row[] = [
  // a deny of more than one segment: out of its shape, into it, across roots
  { what: 'rename a denied shape away', from: 'w/proj/private', to: 'w/proj/pub2', allowed: false },
  { what: 'trailing slash', from: 'w/proj/private/', to: 'w/proj/pub3', allowed: false },
  {
    what: 'move a denied shape to another root',
    from: 'w/proj/private',
    to: 'w/other/p',
    allowed: false,
  },
  {
    what: 'rename into a denied shape',
    from: 'w/proj/app/pub',
    to: 'w/proj/app/private',
    allowed: false,
  },
  {
    what: 'move onto an existing denied-shape dir',
    from: 'w/proj/app/pub',
    to: 'w/proj/private',
    allowed: false,
  },
  {
    what: 'anchored glob: its directory away',
    from: 'w/vault/cfg',
    to: 'w/other/cfg',
    allowed: false,
  },
  {
    what: 'anchored glob: a directory into its shape',
    from: 'w/proj/app/pub',
    to: 'w/vault/cfg2',
    allowed: false,
  },
  {
    what: 'anchored glob: its base',
    from: 'w/vault',
    to: 'w/other/vault',
    allowed: false,
  },
  // a read-only root nested in a writable one
  { what: 'the parent of a read-only root', from: 'w/proj/app', to: 'w/proj/app2', allowed: false },
  {
    what: 'the read-only root itself',
    from: 'w/proj/app/vendor',
    to: 'w/proj/vendor2',
    allowed: false,
  },
  {
    what: 'into the read-only root',
    from: 'w/proj/app/pub',
    to: 'w/proj/app/vendor/pub',
    allowed: false,
  },
  {
    what: 'through a symlinked ancestor',
    from: 'w/proj/lnk/vendor',
    to: 'w/other/v',
    allowed: false,
  },
  { what: 'a symlink to the parent', from: 'w/proj/lnk', to: 'w/other/lnk', allowed: false },
  // staging a host configuration folder and moving it into place
  { what: 'stage into .vscode', from: 'home/stage', to: 'w/proj/.vscode', allowed: false },
  {
    what: 'stage onto an existing empty dir',
    from: 'home/stage',
    to: 'w/proj/app/.cursor',
    allowed: false,
  },
  {
    what: 'stage into .claude, deep',
    from: 'home/stage',
    to: 'w/proj/a/b/.claude',
    allowed: false,
  },
  { what: 'stage into .gemini', from: 'home/stage', to: 'w/proj/.gemini', allowed: false },
  { what: 'stage into ~/.gemini', from: 'home/stage', to: 'home/.gemini', allowed: false },
  { what: 'stage into ~/.codex', from: 'home/stage', to: 'home/.codex', allowed: false },
  { what: 'stage into ~/.continue', from: 'home/stage', to: 'home/.continue', allowed: false },
  { what: 'stage into ~/.claude', from: 'home/stage', to: 'home/.claude', allowed: false },
  { what: 'stage into ~/.config/zed', from: 'home/stage', to: 'home/.config/zed', allowed: false },
  {
    what: 'stage into ~/.config/systemd/user',
    from: 'home/stage',
    to: 'home/.config/systemd/user',
    allowed: false,
  },
  {
    what: 'stage into ~/.config/systemd',
    from: 'home/stage',
    to: 'home/.config/systemd',
    allowed: false,
  },
  { what: 'stage into ~/.codeium', from: 'home/stage', to: 'home/.codeium', allowed: false },
  { what: 'the root holding both', from: 'w/proj', to: 'w/proj-moved', allowed: false },
  { what: 'the home folder itself', from: 'home/.config', to: 'home/config-moved', allowed: false },
  // ordinary moves keep working
  {
    what: 'rename a plain directory',
    from: 'w/proj/app/src',
    to: 'w/proj/app/source',
    allowed: true,
  },
  {
    what: 'move a plain directory to another root',
    from: 'w/proj/app/pub',
    to: 'w/other/pub',
    allowed: true,
  },
  { what: 'and back', from: 'w/other/pub', to: 'w/proj/app/pub', allowed: true },
  {
    what: 'a file',
    from: 'w/proj/app/source/main.js',
    to: 'w/proj/app/source/index.js',
    allowed: true,
  },
  {
    what: 'a case variant is another name here',
    from: 'w/proj/app/pub',
    to: 'w/proj/app/PRIVATE',
    allowed: true,
  },
];

void t.test('moving whole directories through the enforcing proxy', async (t) => {
  const dir = ownedShortDir(t);
  makeWorkspace(dir);
  const d = await startDaemon(t, policy(dir), { dir });
  const fs = await startProxiedFs(t, { server: 'fs', socket: d.socket });
  await waitFor(async () => (await fs.allowed()).length === 5, 30_000, 'the first list');

  let refused = 0;
  for (const row of ROWS) {
    let from = join(dir, row.from) + (row.from.endsWith('/') ? '/' : '');
    if (row.from === 'home/stage') {
      // Each staging attack starts from its own folder of agent-written host configuration.
      from = join(dir, `home/stage-${refused}`);
      mkdirSync(from);
      writeFileSync(join(from, 'mcp.json'), STAGED);
      writeFileSync(join(from, 'settings.json'), STAGED);
    }
    const to = join(dir, row.to);
    const r = await fs.call('move_file', { source: from, destination: to });
    if (row.allowed) {
      t.equal(r.isError, false, `${row.what}: moved (${r.text})`);
      t.ok(existsSync(to), `${row.what}: ${row.to} exists`);
      continue;
    }
    refused++;
    t.match(r.text, /^mcp-roots-proxy refused /, `${row.what}: refused by the proxy (${r.text})`);
    if (row.to === 'w/proj/private' || row.to === 'w/proj/app/.cursor') continue; // existed
    t.notOk(existsSync(to), `${row.what}: ${row.to} was not made`);
  }
  t.comment(`${ROWS.length} moves, ${refused} refused by the proxy`);

  // What the refused moves were after never happened.
  const w = join(dir, 'w');
  t.equal(readFileSync(join(w, 'proj/private/key.txt'), 'utf8'), MARK.key, 'the key stayed');
  t.equal(readFileSync(join(w, 'vault/cfg/secret.json'), 'utf8'), MARK.cfg, 'the secret stayed');
  t.equal(readFileSync(join(w, 'proj/app/vendor/lib.js'), 'utf8'), MARK.vendor, 'vendor intact');
  for (const p of [
    'w/proj/.vscode/mcp.json',
    'w/proj/.cursor',
    'w/proj/.gemini/settings.json',
    'home/.gemini/settings.json',
    'home/.codex',
    'home/.config/zed/settings.json',
    'home/.config/systemd',
  ]) {
    t.notOk(existsSync(join(dir, p)), `${p} was never written`);
  }
  for (const p of ['w/proj/private/key.txt', 'w/vault/cfg/secret.json']) {
    const r = await fs.call('read_text_file', { path: join(dir, p) });
    t.match(r.text, /^mcp-roots-proxy refused .*denied/, `${p} still unreadable`);
  }
  const write = await fs.call('write_file', {
    path: join(w, 'proj/app/vendor/lib.js'),
    content: 'changed',
  });
  t.match(write.text, /^mcp-roots-proxy refused .*read-only/, 'the read-only root stays read-only');

  // The two attacks as first reported, step by step: every step fails, nothing leaks or changes.
  const steps: [string, Record<string, unknown>][] = [
    ['move_file', { source: join(w, 'proj/private'), destination: join(w, 'proj/pub') }],
    ['read_text_file', { path: join(w, 'proj/pub/key.txt') }],
    ['move_file', { source: join(w, 'proj/app'), destination: join(w, 'proj/app2') }],
    ['write_file', { path: join(w, 'proj/app2/vendor/lib.js'), content: 'changed' }],
    ['move_file', { source: join(w, 'proj/app2'), destination: join(w, 'proj/app') }],
  ];
  for (const [tool, args] of steps) {
    const r = await fs.call(tool, args);
    t.equal(r.isError, true, `${tool} ${JSON.stringify(args)} fails`);
    t.notOk(r.text.includes(MARK.key), `${tool}: the key does not come back`);
  }
  t.equal(readFileSync(join(w, 'proj/app/vendor/lib.js'), 'utf8'), MARK.vendor, 'vendor intact');

  // Everyday writes under the same policy.
  for (const [tool, args] of [
    ['create_directory', { path: join(w, 'proj/app/newdir') }],
    ['write_file', { path: join(w, 'proj/app/newdir/a.txt'), content: 'a' }],
    ['create_directory', { path: join(w, 'proj/app/newdir/.github') }],
    ['write_file', { path: join(w, 'proj/app/source/new.js'), content: 'x' }],
    ['move_file', { source: join(w, 'proj/app/newdir'), destination: join(w, 'other/newdir') }],
    ['create_directory', { path: join(w, 'other/fresh') }],
    ['write_file', { path: join(w, 'other/notes.md'), content: 'n' }],
  ] as const) {
    const r = await fs.call(tool, args);
    t.equal(r.isError, false, `${tool} ${JSON.stringify(args)}: ${r.text}`);
  }
});
