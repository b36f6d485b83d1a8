/** The paths no policy can open for writing (POLICY.md rule 6). */
import { dirname, join } from 'node:path';
import type { FsView } from './model.js';
import { compileDeny, type DenyRule } from './deny.js';

/** MCP host configuration files, relative to the home directory, or `**\/` patterns. */
export const HOST_CONFIG_FILES = [
  '.config/Claude/claude_desktop_config.json',
  '.cursor/mcp.json',
  '.claude.json',
  '.claude/settings.json',
  '.claude/settings.local.json',
  '.config/Code/User/settings.json',
  '.config/Code/User/mcp.json',
  '.config/Code - Insiders/User/settings.json',
  '.config/Code - Insiders/User/mcp.json',
  '.config/VSCodium/User/settings.json',
  '.config/VSCodium/User/mcp.json',
  '.config/Cursor/User/settings.json',
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
  for (const pattern of HOST_CONFIG_PATTERNS)
    add(pattern, `${pattern} (MCP host configuration)`, { inMeta: false });
  return Promise.all(rules);
}
