/** The paths no policy can open for writing (POLICY.md rule 6). */
import { dirname, join } from 'node:path';
import type { FsView } from './model.js';
import { compileDeny, type DenyRule } from './deny.js';

/** MCP host configuration files, relative to the home directory. */
export const HOST_CONFIG_FILES = [
  '.cursor/mcp.json',
  '.claude.json',
  '.claude/settings.json',
  '.claude/settings.local.json',
];

/** MCP host configuration files, relative to `$XDG_CONFIG_HOME` (and to `~/.config`). */
export const HOST_CONFIG_IN_CONFIG_HOME = [
  'Claude/claude_desktop_config.json',
  'Code/User/settings.json',
  'Code/User/mcp.json',
  'Code - Insiders/User/settings.json',
  'Code - Insiders/User/mcp.json',
  'VSCodium/User/settings.json',
  'VSCodium/User/mcp.json',
  'Cursor/User/settings.json',
];

/**
 * What starts and configures mcp-rootsd itself under systemd, relative to `$XDG_CONFIG_HOME`: its
 * units and drop-ins (which can change `ExecStart`) and the user manager's environment (which can
 * set `MCP_ROOTS_CONFIG`).
 */
export const DAEMON_CONFIG_IN_CONFIG_HOME = [
  'systemd/user/mcp-rootsd.service',
  'systemd/user/mcp-rootsd.socket',
  'systemd/user/mcp-rootsd.service.d',
  'systemd/user/mcp-rootsd.socket.d',
  'environment.d',
];
export const HOST_CONFIG_PATTERNS = ['**/.vscode/mcp.json', '**/.cursor/mcp.json', '**/.mcp.json'];

export interface ProtectedInput {
  home: string;
  /** Every loaded policy file (main, includes, grants), as given. */
  policyFiles: string[];
  /** Every include pattern, absolute. */
  includePatterns: string[];
  stateDir?: string;
  runtimeDir?: string;
  /** `$XDG_CONFIG_HOME` when it is set (absolute); `~/.config` is protected either way. */
  configHome?: string;
  /** This installation of mcp-roots (its code decides every access). */
  installDir?: string;
}

/** Compile the protected paths as write denies. */
export async function protectedRules(fs: FsView, input: ProtectedInput): Promise<DenyRule[]> {
  const rules: Promise<DenyRule>[] = [];
  const add = (
    path: string,
    display: string,
    opts: { entriesOnly?: boolean; inMeta?: boolean } = {},
  ) =>
    rules.push(
      compileDeny(fs, path, 'write', {
        source: 'protected',
        display,
        entriesOnly: opts.entriesOnly,
        inMeta: opts.inMeta ?? true,
      }),
    );
  const dirs = new Set<string>();
  for (const file of input.policyFiles) {
    add(file, `${file} (a policy file)`);
    dirs.add(dirname(file));
    try {
      const real = await fs.realpath(file);
      dirs.add(dirname(real));
    } catch {
      // a file that vanished since loading: its path is still protected above
    }
  }
  for (const pattern of input.includePatterns)
    add(pattern, `${pattern} (an include pattern)`, { inMeta: false });
  for (const dir of dirs)
    add(dir, `${dir} (holds policy files)`, { entriesOnly: true, inMeta: false });
  if (input.stateDir) add(input.stateDir, `${input.stateDir} (mcp-roots state)`);
  if (input.runtimeDir) add(input.runtimeDir, `${input.runtimeDir} (mcp-roots runtime)`);
  for (const rel of HOST_CONFIG_FILES)
    add(join(input.home, rel), `~/${rel} (MCP host configuration)`);
  const configHomes = new Set([
    join(input.home, '.config'),
    input.configHome ?? join(input.home, '.config'),
  ]);
  for (const base of configHomes) {
    for (const rel of HOST_CONFIG_IN_CONFIG_HOME)
      add(join(base, rel), `${join(base, rel)} (MCP host configuration)`);
    for (const rel of DAEMON_CONFIG_IN_CONFIG_HOME)
      add(join(base, rel), `${join(base, rel)} (starts and configures mcp-rootsd)`);
  }
  // The code that decides every access, not the rest of a clone (its examples may be roots).
  if (input.installDir) {
    for (const part of ['dist', 'node_modules', 'package.json']) {
      const path = join(input.installDir, part);
      add(path, `${path} (this mcp-roots installation)`);
    }
  }
  for (const pattern of HOST_CONFIG_PATTERNS)
    add(pattern, `${pattern} (MCP host configuration)`, { inMeta: false });
  return Promise.all(rules);
}
