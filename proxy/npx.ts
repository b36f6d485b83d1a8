/**
 * `npx PKG ARGS` inside a sandbox: npx would fetch the package's metadata and write npm's cache,
 * neither of which a read-only sandbox allows. So the proxy finds what npx would run itself,
 * outside, and starts that directly: a command of that name in a `node_modules/.bin` (as npx
 * does first, npx-local-bin.ts), else the package from npx's cache, its bin started with Node;
 * the sandbox then shows those files read-only (program.ts).
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, readdir } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Launch } from './launch.js';
import { findOnPath } from '../common/find-on-path.js';
import { readRegularFile } from '../common/read-regular-file.js';
import { npmCacheDir } from './npm-cache.js';
import { cacheEntryRefusal } from './npx-cache-entry.js';
import { localBin, localBinTarget } from './npx-local-bin.js';
import { writtenBy } from './written-by.js';
import { compareVersions, parseVersion, wanted, type Version } from './npx-version.js';
import type { ProgramContext } from './program.js';

/** A package.json in npx's cache larger than this is not read. */
const PACKAGE_JSON_MAX = 16 << 20;

/** npx options that take no value and change nothing here. */
const FLAGS = new Set(['-y', '--yes', '-q', '--quiet', '--no']);

/** npx's words: the package, the command `-p` names (if any), and the server's arguments. */
interface NpxWords {
  spec: string;
  command: string | undefined;
  rest: string[];
}

/**
 * `npx [-y] SPEC ARGS` or `npx [-y] -p SPEC COMMAND ARGS` (`--package SPEC`, `--package=SPEC`),
 * or what is not understood, in a clause.
 */
export function npxWords(args: readonly string[]): NpxWords | string {
  const packages: string[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const a = args[i]!;
    if (FLAGS.has(a)) continue;
    if (a === '-p' || a === '--package') packages.push(args[++i] ?? '');
    else if (a.startsWith('--package=')) packages.push(a.slice('--package='.length));
    else break;
  }
  const word = args[i];
  if (packages.length > 1) return `found ${packages.length} packages: name one`;
  if (packages.some((p) => p === '' || p.startsWith('-')))
    return `found ${JSON.stringify(packages[0])} after -p`;
  if (word === undefined || word.startsWith('-')) return `found ${JSON.stringify(word ?? '')}`;
  const rest = args.slice(i + 1);
  return packages.length === 1
    ? { spec: packages[0]!, command: word, rest }
    : { spec: word, command: undefined, rest };
}

/** `@scope/name@1.2.3` to its name and version or range. */
export function parseSpec(spec: string): { name: string; version: string | undefined } {
  const at = spec.indexOf('@', spec.startsWith('@') ? 1 : 0);
  return at <= 0
    ? { name: spec, version: undefined }
    : { name: spec.slice(0, at), version: spec.slice(at + 1) };
}

interface Found {
  /** The `_npx/HASH` directory it was installed in. */
  entry: string;
  dir: string;
  version: string;
  /** Undefined when package.json's version is not one (then no version or range matches it). */
  parsed: Version | undefined;
  bin: string;
  /** Why this copy may not run (it is still counted, so that it is never passed over unsaid). */
  refused: string | undefined;
}

/**
 * `command`: the bin to run (`-p PKG COMMAND`), else the one named as the package, else its
 * first. A copy without that command is counted, refused, so that the refusal names its bins.
 */
async function cached(
  cache: string,
  name: string,
  serverOwn: readonly string[],
  command?: string,
): Promise<Found[]> {
  let entries: string[];
  try {
    entries = await readdir(join(cache, '_npx'));
  } catch {
    return [];
  }
  const out: Found[] = [];
  for (const e of entries) {
    const entry = join(cache, '_npx', e);
    const dir = join(entry, 'node_modules', name);
    try {
      // A regular file only: a FIFO there would hold the start (common/read-regular-file.ts).
      const text = await readRegularFile(join(dir, 'package.json'), PACKAGE_JSON_MAX);
      if (text === undefined) continue;
      const pkg = JSON.parse(text) as {
        version?: string;
        bin?: string | Record<string, string>;
      };
      const bins = typeof pkg.bin === 'string' ? { [basename(name)]: pkg.bin } : (pkg.bin ?? {});
      const own = (key: string) => (Object.hasOwn(bins, key) ? bins[key] : undefined);
      const bin =
        command !== undefined ? own(command) : (own(basename(name)) ?? Object.values(bins)[0]);
      const version = pkg.version ?? '0';
      if (bin === undefined && command !== undefined && Object.keys(bins).length > 0) {
        out.push({
          entry,
          dir,
          version,
          parsed: parseVersion(version),
          bin: dir,
          refused: `${name}@${version} has no command ${JSON.stringify(command)}; its commands are ${Object.keys(bins).join(', ')}`,
        });
      } else if (bin !== undefined) {
        const refused = await cacheEntryRefusal(
          { cache, entry, dir, bin, pkg: `${name}@${version}` },
          serverOwn,
        );
        out.push({
          entry,
          dir,
          version,
          parsed: parseVersion(version),
          bin: join(dir, bin),
          refused,
        });
      }
    } catch {
      // not in this entry
    }
  }
  return out;
}

/** Newer than (> 0), older than (< 0) or the same version as (0): no version counts as oldest. */
const order = (a: Found, b: Found): number =>
  a.parsed === undefined || b.parsed === undefined
    ? (a.parsed === undefined ? 0 : 1) - (b.parsed === undefined ? 0 : 1)
    : compareVersions(a.parsed, b.parsed);

/**
 * The `_npx` directory npx itself installs `spec` in: the first 16 hex digits of the SHA-512 of
 * the package specs as written, sorted and joined by newlines (libnpmexec's cacheInstallDir; npx
 * records them in that directory's package.json, `_npx.packages`). One spec here.
 */
export function npxInstallDir(cache: string, spec: string): string {
  return join(cache, '_npx', createHash('sha512').update(spec).digest('hex').slice(0, 16));
}

/**
 * The copies of the newest version in `found`. More than one (npx caches `PKG` and `PKG@latest`
 * apart) is settled by the directory npx installs this very spec in; taking the first by name
 * instead would let a copy named to sort first (`_npx/0aa`) win, so without it the caller refuses.
 */
function newest(found: readonly Found[]): Found[] {
  const best = found.reduce<Found | undefined>(
    (a, f) => (a === undefined || order(f, a) > 0 ? f : a),
    undefined,
  );
  return best === undefined ? [] : found.filter((f) => order(f, best) === 0);
}

/** A word as the shell reads it back: `pkg@^1` stays, `pkg@>=1 <2` is quoted. */
const shellWord = (s: string): string =>
  /^[\w@/.:=+^~-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;

const versions = (found: readonly Found[]): string =>
  [...new Set(found.map((f) => f.version))].join(', ');
const listed = (found: readonly Found[]): string =>
  found.length === 0 ? '' : ` (it holds ${versions(found)})`;

/** What npx would run, as a launch that needs no npx; a note for the log; or why it cannot be. */
export async function resolveNpx(
  launch: Launch,
  ctx: ProgramContext,
  serverOwn: readonly string[] = [],
): Promise<{ launch: Launch; note?: string } | { problem: string }> {
  if (basename(launch.command) !== 'npx') return { launch };
  const words = npxWords(launch.args);
  if (typeof words === 'string') {
    return {
      problem: `under --sandbox the proxy runs npx's package itself and understands only npx [-y] PACKAGE[@VERSION] ARGS and npx [-y] -p PACKAGE[@VERSION] COMMAND ARGS; start the package's bin with node instead (${words})`,
    };
  }
  const { spec, command, rest } = words;

  // npx runs a command of this name in node_modules/.bin of the directory or one above first.
  // With -p, whether the project's copy or the cache's runs depends on the project's own
  // dependencies, which the proxy does not read: it says so rather than guess.
  const local = await localBin(command ?? spec, ctx.cwd);
  if (local !== undefined && command !== undefined) {
    return {
      problem: `npx -p ${spec} ${command}: ${local} is also a command of that name, and whether npx runs it or the cached package's depends on the project's dependencies. Name the file to run instead (node /path/to/it), or start the server where no node_modules/.bin holds ${command} (--cwd)`,
    };
  }
  if (local !== undefined) {
    const file = await localBinTarget(local);
    // The server may have left the command there in an earlier session: then it would choose
    // what runs, and through its `#!` line what the sandbox shows (program.ts).
    const own = await writtenBy(local, serverOwn);
    if (own !== undefined) {
      return {
        problem: `npx ${spec} would run the command ${local}, which lies in ${own}, where the server may write (a root, or a sandbox.write path): a file it left there would choose what runs and what the sandbox shows. Name the program in the command instead (node /path/to/its/package/dist/index.js), or start the server with its working directory outside its roots (--cwd)`,
      };
    }
    if (file === undefined) {
      return {
        problem: `npx ${spec} runs the command ${local}, which leads out of its node_modules or to no package in it (or that node_modules is a link): the sandbox does not follow such a link, which a server may have made. Name the file it leads to instead (node /path/to/it, or the path itself). ${spec} names that command, not a package: installing the npm package named ${spec} would run other code`,
      };
    }
    try {
      await access(file, constants.X_OK);
    } catch {
      return {
        problem: `npx ${spec} runs the command ${local} (${file}), which cannot be executed: npx would fail on it too. Reinstall the package that provides it (npm install in that project). ${spec} names that command, not a package: installing the npm package named ${spec} would run other code`,
      };
    }
    // Started as npx starts it (the kernel reads its `#!` line); program.ts shows its
    // interpreter, its package and the node_modules it loads from.
    return {
      launch: { ...launch, command: file, args: rest },
      note: `npx ${spec}: running the project's command ${local} (${file}), as npx does before it looks for a package`,
    };
  }

  const { name, version } = parseSpec(spec);
  // A package name is a file name in npx's cache: `..` or a third segment would lead out of it.
  if (
    !/^(?:@[^/\s]+\/)?[^/\s]+$/.test(name) ||
    name.split('/').some((p) => /^@?\.{1,2}$/.test(p))
  ) {
    return {
      problem: `${JSON.stringify(spec)} does not name an npm package (name, or @scope/name)`,
    };
  }
  const cache = await npmCacheDir(ctx.env, ctx.home, ctx.cwd);
  const all = await cached(cache, name, serverOwn, command);
  const want = wanted(version);
  if (want.kind === 'tag' || want.kind === 'other') {
    const what =
      want.kind === 'tag'
        ? `the tag ${JSON.stringify(version)} names whichever version the registry gives it now, which a sandboxed server cannot ask`
        : `${JSON.stringify(version)} is not a version, a range or a tag the proxy can look up in npx's cache`;
    return {
      problem: `${spec}: ${what}. Name a version instead (${name}@1.2.3, or a range such as ${name}@^1); npx's cache (${join(cache, '_npx')}) holds ${all.length === 0 ? `no ${name}` : versions(all)}${want.kind === 'tag' ? `; npm view ${shellWord(spec)} version  tells which version the tag names, and  (cd ~ && npx -y -p ${shellWord(`${name}@VERSION`)} true)  puts it in the cache` : ''}`,
    };
  }
  // No version, or `latest`: the registry's latest is a release unless the package has none.
  const releases = all.filter((f) => f.parsed?.pre.length === 0);
  const copies = newest(
    want.kind === 'newest'
      ? releases.length > 0
        ? releases
        : all
      : all.filter((f) => f.parsed !== undefined && want.test(f.parsed)),
  );
  const own = copies.filter((f) => f.entry === npxInstallDir(cache, spec));
  const chosen = copies.length > 1 && own.length === 1 ? own : copies;
  const best = chosen[0];
  const refused = chosen.find((f) => f.refused !== undefined);
  if (refused !== undefined) return { problem: `npx ${spec}: ${refused.refused!}` };
  if (chosen.length > 1) {
    return {
      problem: `npx ${spec}: npx's cache holds ${name} ${best!.version} more than once (${copies.map((f) => f.dir).join(', ')}), and which of them npx would run depends on how each was installed, and none is where npx installs this spec (${npxInstallDir(cache, spec)}): the copy whose directory sorts first could be anyone's. Remove all but one of those _npx directories (or all of npx's cache, ${join(cache, '_npx')}, which npx fills again) and cache it again with  (cd ~ && npx -y -p ${shellWord(spec)} true)`,
    };
  }
  const node = await findOnPath('node', ctx.env, ctx.cwd);
  if (best === undefined || node === undefined) {
    const bare = command === undefined && version === undefined && !name.includes('/');
    const where = bare
      ? `${spec} is not a command in node_modules/.bin of ${ctx.cwd} or a directory above it (where npx looks first), and no package of that name is in npx's cache (${join(cache, '_npx')}). If ${spec} is a command of a project's package, start the server in that project (--cwd, or the launch's cwd) or name the file (node_modules/.bin/${spec}). If you mean the npm package named ${spec} (a command's name is often not its package's: check it is the one you want), `
      : `${spec} is not in npx's cache (${join(cache, '_npx')})${listed(all)}, and a sandboxed server cannot install it: `;
    return {
      problem: `${where}run  (cd ~ && npx -y -p ${shellWord(spec)} true)  once outside the sandbox, from a directory whose node_modules does not hold it (npx caches nothing when a project has its own copy), or install it with npm install -g ${shellWord(spec)} and start its bin`,
    };
  }
  const asked = version === undefined ? name : spec;
  return {
    launch: { ...launch, command: node, args: [best.bin, ...rest] },
    // A tag or range may stand for a newer version than the cache holds: the log says which ran.
    ...(want.kind === 'newest' || parseVersion(version ?? '') === undefined
      ? {
          note: `npx ${asked}: running ${name} ${best.version}, the newest ${want.kind !== 'newest' ? `that ${version} allows` : releases.length > 0 ? 'release' : 'prerelease'} in npx's cache (the sandbox cannot ask the registry for a newer one: to update, run  (cd ~ && npx -y -p ${shellWord(`${name}@latest`)} true)  outside it)`,
        }
      : {}),
  };
}
