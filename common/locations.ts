/** Where mcp-roots keeps its files (docs/policy.md "Where policies live"); the environment is passed in. */
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export type Env = Record<string, string | undefined>;

/** The home directory: `$HOME`, else the password database's. */
export function homeDir(env: Env): string {
  return env.HOME && env.HOME !== '' ? env.HOME : homedir();
}

/** The main policy file: `--config`, else `MCP_ROOTS_CONFIG`, else `$XDG_CONFIG_HOME/mcp-roots.yaml`. */
export function configFile(env: Env, cwd: string, flag?: string): string {
  if (flag) return resolve(cwd, flag);
  if (env.MCP_ROOTS_CONFIG) return resolve(cwd, env.MCP_ROOTS_CONFIG);
  return join(configHome(env), 'mcp-roots.yaml');
}

/** `$XDG_CONFIG_HOME`, else `~/.config`. */
export function configHome(env: Env): string {
  return env.XDG_CONFIG_HOME?.startsWith('/') ? env.XDG_CONFIG_HOME : join(homeDir(env), '.config');
}

/** The directory that holds `grants.yaml`: `--state-dir`, else `MCP_ROOTS_STATE_DIR`, else `$XDG_STATE_HOME/mcp-roots`. */
export function stateDir(env: Env, cwd: string, flag?: string): string {
  if (flag) return resolve(cwd, flag);
  if (env.MCP_ROOTS_STATE_DIR) return resolve(cwd, env.MCP_ROOTS_STATE_DIR);
  const base = env.XDG_STATE_HOME?.startsWith('/')
    ? env.XDG_STATE_HOME
    : join(homeDir(env), '.local/state');
  return join(base, 'mcp-roots');
}

/** The grants file inside a state directory. */
export function grantsFile(dir: string): string {
  return join(dir, 'grants.yaml');
}

/** Show a path with the home directory as `~`, for people. */
export function tildify(path: string, home: string): string {
  if (path === home) return '~';
  return path.startsWith(home + '/') ? `~${path.slice(home.length)}` : path;
}

/** The decision log inside a state directory; rotated copies add `.1`, `.2`, … (oldest last). */
export function decisionLogFile(dir: string): string {
  return join(dir, 'decisions.jsonl');
}
