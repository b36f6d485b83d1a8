/**
 * docs/security.md "Protected paths": every path a current host, git, a shell or systemd reads to
 * run code or start a server is write-denied under a root that would otherwise allow it, at any
 * depth for project-level folders; neighbours that run nothing stay writable.
 */
import { join } from 'node:path';
import t from 'tap';
import { contextFor, evaluate, makeTree } from '../helpers/policy.js';
import {
  DAEMON_CONFIG_IN_CONFIG_HOME,
  HOST_CONFIG_FILES,
  HOST_CONFIG_IN_CONFIG_HOME,
  STARTUP_FILES,
  STARTUP_IN_CONFIG_HOME,
  SYSTEMD_IN_CONFIG_HOME,
  within,
} from '../../policies/protected.js';

/** Paths relative to the fixture dir (home is `home/`, `$XDG_CONFIG_HOME` is `xdg/`), writable? */
const ROWS: [string, boolean][] = [
  // Claude Code
  ['home/.claude/settings.json', false],
  ['home/.claude/settings.local.json', false],
  ['home/.claude/plugins/p/hooks/hooks.json', false],
  ['home/.claude.json', false],
  ['home/projects/app/.claude/settings.json', false],
  ['home/projects/app/.claude/settings.local.json', false],
  ['home/projects/app/sub/dir/.claude/settings.local.json', false],
  ['home/projects/app/.claude/hooks/check.sh', false],
  ['home/projects/app/.mcp.json', false],
  // Gemini CLI
  ['home/.gemini/settings.json', false],
  ['home/.gemini/extensions/x/gemini-extension.json', false],
  ['home/projects/app/.gemini/settings.json', false],
  ['home/projects/app/.gemini/commands/run.toml', false],
  // Codex
  ['home/.codex/config.toml', false],
  ['home/projects/app/.codex/config.toml', false],
  // Zed
  ['home/.config/zed/settings.json', false],
  ['xdg/zed/settings.json', false],
  ['home/projects/app/.zed/settings.json', false],
  ['home/projects/app/.zed/tasks.json', false],
  // Windsurf, Continue, Cursor, VS Code
  ['home/.codeium/windsurf/mcp_config.json', false],
  ['home/projects/app/.windsurf/hooks.json', false],
  ['home/.continue/config.yaml', false],
  ['home/.continue/config.ts', false],
  ['home/projects/app/.continue/mcpServers/x.yaml', false],
  ['home/.cursor/mcp.json', false],
  ['home/.cursor/hooks.json', false],
  ['home/projects/app/.cursor/mcp.json', false],
  ['home/projects/app/.cursor/hooks.json', false],
  ['home/.vscode/extensions/evil/extension.js', false],
  ['home/projects/app/.vscode/mcp.json', false],
  ['home/projects/app/.vscode/tasks.json', false],
  ['xdg/Code/User/tasks.json', false],
  ['home/.config/Cursor/User/mcp.json', false],
  ['xdg/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json', false],
  ['home/.kiro/settings/mcp.json', false],
  ['home/projects/app/.kiro/settings/mcp.json', false],
  ['home/projects/app/.roo/mcp.json', false],
  // systemd: every unit, drop-ins for all units and by prefix, the manager's own configuration
  ['home/.config/systemd/user/service.d/10-all.conf', false],
  ['home/.config/systemd/user/mcp-.service.d/10-prefix.conf', false],
  ['xdg/systemd/user/mcp-.socket.d/x.conf', false],
  ['xdg/systemd/user/evil.service', false],
  ['xdg/systemd/user.conf', false],
  ['xdg/systemd/user.conf.d/env.conf', false],
  ['home/.local/share/systemd/user/evil.service', false],
  // shells, autostart, PATH, git
  ['home/.bashrc', false],
  ['home/.zshenv', false],
  ['home/.profile', false],
  ['xdg/fish/config.fish', false],
  ['home/.config/autostart/x.desktop', false],
  ['home/.local/bin/ls', false],
  ['home/.gitconfig', false],
  ['xdg/git/config', false],
  ['home/projects/app/.git/hooks/pre-commit', false],
  ['home/projects/app/.git/config', false],
  ['home/.ssh/config', false],
  ['home/.ssh/authorized_keys', false],
  ['home/.npmrc', false],
  ['home/.cargo/config.toml', false],
  // neighbours that run nothing
  ['home/projects/app/src/main.ts', true],
  ['home/projects/app/claude/settings.json', true],
  ['home/projects/app/.github/workflows/ci.yml', true],
  ['home/projects/app/.git/info/exclude', true],
  ['home/projects/app/.git/objects/ab/cdef', true],
  ['home/projects/app/.gitignore', true],
  ['home/projects/app/vscode.md', true],
  ['home/.local/share/notes.txt', true],
  ['xdg/systemd/README', true],
  ['home/.bashrc.d-notes.txt', true],
  ['home/.ssh/known_hosts', true],
  ['home/.cargo/registry/x', true],
];

void t.test('paths that run code or start servers are protected', async (t) => {
  const dir = t.testdir({});
  makeTree(dir, ['home/projects/app/', 'xdg/']);
  const ctx = contextFor(dir, { env: { XDG_CONFIG_HOME: join(dir, 'xdg') } });
  const ev = await evaluate(
    dir,
    `version: 1\nservers:\n  s:\n    roots: [{path: ${dir}, readOnly: false}]\n`,
    ctx,
  );
  t.same(ev.errors, []);
  for (const [rel, writable] of ROWS) {
    const r = await ev.resolved.check('s', join(dir, rel), 'write');
    t.equal(r.allowed, writable, `write ${rel}: ${r.reason}`);
    if (!writable) t.match(r.reason, /protected path/, `${rel} is refused as protected`);
  }
});

void t.test('within(base)(rel) is join(base, rel) for every listed path and any base', (t) => {
  const rels = [
    ...HOST_CONFIG_FILES,
    ...STARTUP_FILES,
    ...HOST_CONFIG_IN_CONFIG_HOME,
    ...DAEMON_CONFIG_IN_CONFIG_HOME,
    ...SYSTEMD_IN_CONFIG_HOME,
    ...STARTUP_IN_CONFIG_HOME,
    '.config',
    '.cache',
  ];
  for (const base of ['/home/a', '/home/a/', '/', '//home//a//', '/home/./a/../b', 'rel', '', '.'])
    for (const rel of rels) t.equal(within(base)(rel), join(base, rel), `${base} + ${rel}`);
  t.end();
});
