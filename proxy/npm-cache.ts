/**
 * Where npm keeps its cache, as npx would find it: the environment's `npm_config_cache` (npm
 * reads `npm_config_*` whatever their case, the last one set winning), else `cache=` in the
 * user's npmrc (`npm_config_userconfig`, else `~/.npmrc`), else `~/.npm`. A project's own
 * `.npmrc` and the global one are not read (docs/security.md, the sandbox's npx).
 */
import { join, resolve } from 'node:path';
import { readRegularFile } from '../common/read-regular-file.js';

/** An npmrc larger than this is not read for its `cache=`. */
const NPMRC_MAX = 1 << 20;

type Env = Readonly<Record<string, string | undefined>>;

/** The last non-empty value of an `npm_config_NAME` variable, any case. */
function npmEnv(env: Env, name: string): string | undefined {
  let value: string | undefined;
  const key = `npm_config_${name}`;
  for (const [k, v] of Object.entries(env)) if (k.toLowerCase() === key && v) value = v;
  return value;
}

/** `~/` and `${VAR}` as npm expands them in a path setting; relative to `cwd` otherwise. */
function npmPath(value: string, env: Env, home: string, cwd: string): string {
  const expanded = value.replace(/(?<!\\)\$\{([^}]+)\}/g, (_, v: string) => env[v] ?? '');
  return expanded.startsWith('~/') ? join(home, expanded.slice(2)) : resolve(cwd, expanded);
}

/** `cache=` of an npmrc's text, unquoted; the last one wins, as in an ini file. */
function npmrcCache(text: string): string | undefined {
  let value: string | undefined;
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*cache\s*=\s*(.*?)\s*$/.exec(line);
    if (m) value = m[1]!.replace(/^(["'])(.*)\1$/, '$2');
  }
  return value || undefined;
}

export async function npmCacheDir(env: Env, home: string, cwd: string): Promise<string> {
  const fromEnv = npmEnv(env, 'cache');
  if (fromEnv !== undefined) return npmPath(fromEnv, env, home, cwd);
  const userconfig = npmPath(npmEnv(env, 'userconfig') ?? '~/.npmrc', env, home, cwd);
  // Not a FIFO left there, which would hold the start (common/read-regular-file.ts).
  const fromRc = npmrcCache((await readRegularFile(userconfig, NPMRC_MAX)) ?? '');
  return fromRc === undefined ? join(home, '.npm') : npmPath(fromRc, env, home, cwd);
}
