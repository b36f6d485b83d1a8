/** The paths no policy can open for writing (docs/policy.md rule 6). */
import { dirname, join } from 'node:path';
import type { FsView } from './model.js';
import { compileDeny, type DenyRule } from './deny.js';
import type { CompileDeny } from './deny-memo.js';
import { GIT_PATTERNS, GIT_POINTER, HOST_CONFIG_PATTERNS } from '../common/protected-patterns.js';

/*
 * What belongs here (docs/security.md, "Protected paths"): a path is protected when a program
 * that runs as the person reads it and, because of what it says, runs a command, starts or adds
 * an MCP server, or loads code, without the person approving that change first: at login, when a
 * shell or a host starts, when a folder is opened, on a routine command (`git status`,
 * `git commit`), or when it changes what mcp-roots enforces. Where a host keeps such files in a
 * folder of its own, the whole folder is protected, so that a file added to it later is too.
 */

/** Relative to the home directory: host configuration folders and files that start servers or run code. */
export const HOST_CONFIG_FILES = [
  // Claude Code: settings (hooks, MCP servers, plugins), its own folder, the user-scope servers
  '.claude',
  '.claude.json',
  // Cursor (mcp.json, hooks.json, extensions), VS Code and its forks (extensions run at start)
  '.cursor',
  '.vscode',
  '.vscode-oss',
  '.vscode-server',
  '.windsurf',
  // Gemini CLI (settings.json with mcpServers and hooks, extensions, commands)
  '.gemini',
  // Codex (config.toml with mcp_servers and notify, hooks)
  '.codex',
  // Windsurf (~/.codeium/windsurf/mcp_config.json and hooks)
  '.codeium',
  // Continue (config.yaml, config.ts that runs, mcpServers/)
  '.continue',
  // Kiro (settings/mcp.json, hooks)
  '.kiro',
];

/** Relative to `$XDG_CONFIG_HOME` (and to `~/.config`): host configuration. */
export const HOST_CONFIG_IN_CONFIG_HOME = [
  'Claude/claude_desktop_config.json',
  // VS Code and its forks, whole: settings, mcp.json, tasks.json, and globalStorage, where
  // extensions such as Cline and Roo Code keep the MCP servers they start
  'Code/User',
  'Code - Insiders/User',
  'VSCodium/User',
  'Cursor/User',
  'Windsurf/User',
  // Zed: settings.json holds context_servers; tasks.json commands
  'zed',
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

/**
 * What the systemd user manager runs or applies to every unit, relative to `$XDG_CONFIG_HOME`:
 * any unit or drop-in there runs code at login, and `service.d/`, `mcp-.service.d/` (prefix
 * drop-ins), `user.conf` and `user.conf.d/` reach mcp-rootsd's own unit as well.
 */
export const SYSTEMD_IN_CONFIG_HOME = ['systemd/user', 'systemd/user.conf', 'systemd/user.conf.d'];

/** Relative to `$XDG_CONFIG_HOME` (and `~/.config`): what runs when a session or shell starts. */
export const STARTUP_IN_CONFIG_HOME = ['autostart', 'fish', 'git'];

/** Relative to the home directory: shell start-up, git's and other tools' configuration, units. */
export const STARTUP_FILES = [
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.profile',
  '.zshrc',
  '.zshenv',
  '.zprofile',
  '.zlogin',
  '.zlogout',
  '.xprofile',
  '.xsessionrc',
  '.pam_environment',
  '.gitconfig',
  '.local/share/systemd/user',
  '.local/bin',
  // commands run on routine use: ssh's ProxyCommand and rc (git push), npm's script-shell and
  // node-options (npm run), cargo's rustc-wrapper and runners (cargo build)
  '.ssh/config',
  '.ssh/rc',
  // lets whoever holds a key run commands as you
  '.ssh/authorized_keys',
  '.ssh/authorized_keys2',
  '.npmrc',
  '.cargo/config.toml',
  '.cargo/config',
];

// `**/NAME` patterns: shared with the sandbox, which lays them out itself (common/protected-patterns.ts).
export { GIT_PATTERNS, HOST_CONFIG_PATTERNS };

/** rootsctl's code cache, relative to `$XDG_CACHE_HOME` (and to `~/.cache`). */
export const CODE_CACHE_DIR = 'mcp-roots';

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
  /** `$XDG_CACHE_HOME` when it is set (absolute); `~/.cache` is protected either way. */
  cacheHome?: string;
  /** This installation of mcp-roots (its code decides every access). */
  installDir?: string;
  /** How each path is compiled (the daemon's recomputes reuse rules; see deny-memo.ts). */
  compileDeny?: CompileDeny;
}

/**
 * `rel => join(base, rel)` for the `rel`s of the lists above (relative, already normal): the base
 * is normalized once and each path is a concatenation. The daemon builds over a hundred of these
 * at every start; through `join` each went through Node's `normalizeString` character by
 * character, enough for V8 to optimise it at start, which maps about 5 MB more of the `node`
 * binary into an idle daemon (bench/FINDINGS.md, eighteenth step).
 */
export function within(base: string): (rel: string) => string {
  const normal = join(base, '.');
  if (normal === '.') return (rel) => rel;
  const prefix = normal.endsWith('/') ? normal : `${normal}/`;
  return (rel) => prefix + rel;
}

/** Compile the protected paths as write denies. */
export async function protectedRules(fs: FsView, input: ProtectedInput): Promise<DenyRule[]> {
  const rules: Promise<DenyRule>[] = [];
  const compile = input.compileDeny ?? compileDeny;
  const add = (
    path: string,
    display: string,
    opts: { entriesOnly?: boolean; inMeta?: boolean; include?: boolean } = {},
  ) =>
    rules.push(
      compile(fs, path, 'write', {
        source: 'protected',
        display,
        entriesOnly: opts.entriesOnly,
        inMeta: opts.inMeta ?? true,
        ...(opts.include ? { include: true } : {}),
      }),
    );
  // Asked before any rule is compiled: a compile's rejection while this waited was unhandled.
  const reals = await Promise.all(
    // A file that vanished since loading (or now behind a symlink loop): its path is still
    // protected below.
    input.policyFiles.map((file) => fs.realpath(file).catch(() => undefined)),
  );
  const dirs = new Set<string>();
  input.policyFiles.forEach((file, i) => {
    add(file, `${file} (a policy file)`);
    dirs.add(dirname(file));
    const real = reals[i];
    if (real !== undefined) dirs.add(dirname(real));
  });
  // Not a deny in `_meta` (a broad base such as the home would be walked whole and watched by the
  // proxy): the sandbox learns of it as `_meta['mcp-roots/include']` (include-meta.ts), and
  // makes sure nothing it could match can be created or changed from inside.
  for (const pattern of input.includePatterns)
    add(pattern, `${pattern} (an include pattern)`, { inMeta: false, include: true });
  for (const dir of dirs)
    add(dir, `${dir} (holds policy files)`, { entriesOnly: true, inMeta: false });
  if (input.stateDir) add(input.stateDir, `${input.stateDir} (mcp-roots state)`);
  if (input.runtimeDir) add(input.runtimeDir, `${input.runtimeDir} (mcp-roots runtime)`);
  const home = within(input.home);
  for (const rel of HOST_CONFIG_FILES) add(home(rel), `~/${rel} (MCP host configuration)`);
  for (const rel of STARTUP_FILES)
    add(home(rel), `~/${rel} (runs as you at login or on a routine command)`);
  const configHomes = new Set([home('.config'), input.configHome ?? home('.config')]);
  for (const base of configHomes) {
    const at = within(base);
    for (const rel of HOST_CONFIG_IN_CONFIG_HOME)
      add(at(rel), `${at(rel)} (MCP host configuration)`);
    for (const rel of DAEMON_CONFIG_IN_CONFIG_HOME)
      add(at(rel), `${at(rel)} (starts and configures mcp-rootsd)`);
    for (const rel of SYSTEMD_IN_CONFIG_HOME)
      add(at(rel), `${at(rel)} (systemd runs it as you; reaches mcp-rootsd too)`);
    for (const rel of STARTUP_IN_CONFIG_HOME)
      add(at(rel), `${at(rel)} (runs as you at login or on a routine command)`);
  }
  // rootsctl's V8 code cache (cli/code-cache.ts): bytecode it runs as the person on every command.
  for (const base of new Set([home('.cache'), input.cacheHome ?? home('.cache')])) {
    const path = join(base, CODE_CACHE_DIR);
    add(path, `${path} (rootsctl's compiled code)`);
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
  for (const pattern of GIT_PATTERNS)
    add(pattern, `${pattern} (git runs it on routine commands)`, { inMeta: false });
  add(GIT_POINTER, `${GIT_POINTER} (names the git directory git reads)`, {
    inMeta: false,
    entriesOnly: true,
  });
  return Promise.all(rules);
}
