/**
 * V8's code cache for `rootsctl`, which starts afresh for every command.
 *
 * Why: most of a short command's own time was V8 parsing and compiling the bundle it loads, not
 * running it (bench/FINDINGS.md). A code cache holds the bytecode of what a run compiled; the
 * next run of the same command deserializes it instead. Node 20 has no cache for ES modules
 * (`module.enableCompileCache` arrived in Node 22.1), so the command runs from a CommonJS bundle
 * compiled with `vm.Script` and its `cachedData`, which every supported Node has.
 *
 * Where, and why it is safe: compiled code is trusted as it is (V8 checks the cache's version,
 * flags and the source's length, not what the code does), so it lives only where nobody but the
 * user can write: `$XDG_CACHE_HOME/mcp-roots` (else `~/.cache/mcp-roots`), a directory owned by
 * the user with no access for group or others (created `0700`), below directories no one else
 * can change (cache-trust.ts), holding files owned by the user that no one else may write, opened
 * without following links, each sealed with a checksum of the source and the cache (a corrupted cache
 * aborts V8). Anything else and the command runs without a cache, as it would on its first run.
 * The daemon protects `~/.cache/mcp-roots` and `$XDG_CACHE_HOME/mcp-roots` from servers' writes
 * (policies/protected.ts): an agent that could write a cache would run code as the user. One file
 * per command and build: `rootsctl-<bundle hash>-<node version>-<arch>-<command>.v8`.
 * `MCP_ROOTS_CODE_CACHE=0` turns it off.
 */
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { ownDir, readOwn, seal, trustedPath, unseal } from './cache-trust.js';

/** The CommonJS wrapper's parameters; `url` stands for the bundle's `import.meta.url`. */
export type Wrapper = (
  exports: unknown,
  require: NodeJS.Require,
  module: { exports: unknown },
  filename: string,
  url: string,
) => void;

/** At most this many cache files per build (one per command): a bound on what a run may write. */
const MAX_FILES = 40;

/**
 * Compile the CommonJS bundle `file` (with the cache for `command`, when there is a usable one),
 * hand its wrapper function to `run`, and return what `run` returns with `save`, to be called once
 * the command has run: it writes the cache when there was none or V8 refused it. `bundles`: the
 * file names of this build's bundles (one per group of commands), whose caches a write keeps.
 */
export function runCached<T>(
  file: string,
  command: string | undefined,
  run: (fn: Wrapper) => T,
  bundles: readonly string[] = [basename(file)],
): { value: T; save: () => void } {
  const bytes = readFileSync(file);
  const source = bytes.toString('utf8');
  const dir = process.env.MCP_ROOTS_CODE_CACHE === '0' ? undefined : cacheDir();
  const build = basename(file).replace(/\.cjs$/, '');
  const name = `${build}-${process.version}-${process.arch}-${commandKey(command)}.v8`;
  const sealed = dir !== undefined && ownDir(dir) ? readOwn(join(dir, name)) : undefined;
  const cachedData = sealed && unseal(bytes, sealed);
  const script = new Script(
    `(function (exports, require, module, __filename, __bundleUrl) {${source}\n})`,
    { filename: file, cachedData },
  );
  const value = run(script.runInThisContext() as Wrapper);
  const save = () => {
    if (dir === undefined || (cachedData !== undefined && !script.cachedDataRejected)) return;
    try {
      const builds = bundles.map((b) => b.replace(/\.cjs$/, ''));
      write(dir, build, name, seal(bytes, script.createCachedData()), builds);
    } catch {
      // A cache that cannot be written costs the next run its compile, nothing else.
    }
  };
  return { value, save };
}

/** `$XDG_CACHE_HOME/mcp-roots`, else `~/.cache/mcp-roots`; undefined without a home. */
function cacheDir(): string | undefined {
  const xdg = process.env.XDG_CACHE_HOME;
  if (xdg?.startsWith('/')) return join(xdg, 'mcp-roots');
  const home = process.env.HOME || homedir();
  return home.startsWith('/') ? join(home, '.cache', 'mcp-roots') : undefined;
}

/** The command's name as a file name part (`validate`, `list`, ...); anything else is `other`. */
function commandKey(command: string | undefined): string {
  return command !== undefined && /^[a-z]{2,16}(?:-[a-z]{2,16})?$/.test(command)
    ? command
    : 'other';
}

/**
 * Write `data` as `name` in `dir` (made `0700` if missing) whole or not at all; drop the caches of
 * other builds (`builds`: this build's bundles).
 */
function write(
  dir: string,
  build: string,
  name: string,
  data: Buffer,
  builds: readonly string[],
): void {
  // Made only below directories no one else can change (cache-trust.ts): never along a link
  // someone else may point elsewhere, as root with a user's environment would otherwise do.
  if (!trustedPath(dirname(dir))) return;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (!ownDir(dir)) return;
  const entries = readdirSync(dir);
  for (const entry of entries) {
    // Caches (and temporary files a killed run left) of other builds or Node versions: nothing
    // will read them again. Another run may have removed one first.
    const cache = entry.startsWith('.') ? entry.slice(1) : entry;
    const ours = builds.some((b) => cache.startsWith(`${b}-${process.version}-`));
    if (cache.startsWith('rootsctl-') && !ours) {
      try {
        unlinkSync(join(dir, entry));
      } catch {
        // gone already
      }
    }
  }
  if (entries.filter((e) => e.replace(/^\./, '').startsWith(`${build}-`)).length >= MAX_FILES)
    return;
  const temp = join(dir, `.${name}.${process.pid}`);
  writeFileSync(temp, data, { mode: 0o600, flag: 'wx' });
  renameSync(temp, join(dir, name));
}
