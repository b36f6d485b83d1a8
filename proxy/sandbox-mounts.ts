/**
 * What a sandboxed server may see, read from the filesystem at the moment it starts: the system
 * as this host lays it out, its roots, the denied and protected paths inside them that exist now,
 * the policy's extra paths, and its own program.
 */
import type { Dirent } from 'node:fs';
import { lstat, readdir, readlink, realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DENY_GLOB, globMatcher } from '../common/glob-dialect.js';
import { linksOnTheWay } from '../common/links-on-the-way.js';
import { whereItWouldBe } from '../common/where-it-would-be.js';
import {
  GIT_DIR_CODE,
  GIT_POINTER,
  HOST_CONFIG_PATTERNS,
  isGitDirShape,
  withBuiltInProtected,
} from '../common/protected-patterns.js';
import type { DenyAccess, DenyMeta, Root } from '../common/types.js';
import { launchRoots, type Launch } from './launch.js';
import { includeHolds, splitInclude } from './sandbox-includes.js';
import { ancestors, inside } from './sandbox-paths.js';
import { programPaths, type ProgramContext } from './program.js';
import { programLinks } from './program-links.js';
import { PROC_READ_ONLY, SYSTEM_PATHS, type SandboxMounts, type SystemMount } from './sandbox.js';

/** The policy's `servers.<name>.sandbox` as the proxy applies it. */
export interface SandboxRule {
  read: string[];
  write: string[];
  network: boolean;
  /** The server may make Unix sockets (common/types.ts). */
  unixSockets?: boolean;
  /** The policy's include patterns, for the `write` paths (common/types.ts). */
  include?: string[];
  /** The server's denies and protected paths, for the `write` paths (common/types.ts). */
  deny?: DenyMeta[];
}

/** How many entries the proxy reads in one root to find the paths a deny pattern matches. */
export const MAX_WALK_ENTRIES = 200_000;

export { ancestors, inside };

async function canonical(p: string): Promise<string | undefined> {
  try {
    return await realpath(p);
  } catch {
    return undefined;
  }
}

/** `p` with every directory above it canonical; the last name itself is not followed (a socket). */
function canonicalFile(p: string): string {
  const absolute = resolve(p);
  return join(whereItWouldBe(dirname(absolute)), basename(absolute));
}

async function isDir(p: string): Promise<boolean | undefined> {
  try {
    return (await lstat(p)).isDirectory();
  } catch {
    return undefined;
  }
}

/**
 * What a deny inside a root covers: a directory, a file, or nothing. A symlink is a name for
 * another path, which the sandbox resolves inside, where its target is shown or hidden on its
 * own; a mount on the link would land on the target instead (hiding a file nobody denied) or, for
 * a target the sandbox lacks, keep bwrap from starting at all.
 */
async function holeKind(p: string): Promise<boolean | undefined> {
  try {
    const st = await lstat(p);
    return st.isSymbolicLink() ? undefined : st.isDirectory();
  } catch {
    return undefined;
  }
}

/** Which of the parts of /proc the sandbox makes read-only this host has (sandbox.ts). */
async function procReadOnly(): Promise<string[]> {
  const found = await Promise.all(
    PROC_READ_ONLY.map((p) =>
      lstat(p).then(
        () => p,
        () => undefined,
      ),
    ),
  );
  return found.filter((p) => p !== undefined);
}

/** The system paths as this host has them: directories, files, or links (merged /usr). */
async function systemMounts(): Promise<{ system: SystemMount[]; extra: string[] }> {
  const system: SystemMount[] = [];
  for (const [path] of SYSTEM_PATHS) {
    try {
      const st = await lstat(path);
      if (st.isSymbolicLink()) system.push({ path, kind: 'symlink', target: await readlink(path) });
      else system.push({ path, kind: st.isDirectory() ? 'dir' : 'file' });
    } catch {
      // not on this host
    }
  }
  // systemd-resolved makes /etc/resolv.conf a link into /run, which the sandbox does not show.
  const extra: string[] = [];
  const resolv = await canonical('/etc/resolv.conf');
  if (resolv !== undefined && !resolv.startsWith('/etc/')) extra.push(resolv);
  return { system, extra };
}

/** Whether an absolute path matches a deny pattern (one that starts with "**" and a slash, or an absolute glob). */
export function patternTest(pattern: string): (path: string) => boolean {
  const m = globMatcher(pattern, DENY_GLOB);
  return pattern.startsWith('**/') ? (p: string) => m(p.slice(1)) : m;
}

/** Whether an absolute path is what one deny of a root's `_meta` names. */
export function denyTest(d: DenyMeta): (path: string) => boolean {
  if ('pattern' in d) return patternTest(d.pattern);
  const denied = fileURLToPath(d.uri);
  return (p) => p === denied;
}

/**
 * The entries of `dir` (given as bytes) with their names as bytes, or none when it cannot be read
 * (gone, not a directory, no permission).
 */
export async function rawEntriesOf(dir: Buffer): Promise<Dirent<Buffer>[]> {
  try {
    return await readdir(dir, { withFileTypes: true, encoding: 'buffer' });
  } catch {
    return [];
  }
}

/**
 * Every existing path under `root` that each deny pattern matches (not descending below a match of
 * that pattern), in one walk for all of them: a root is read once, however many patterns it has.
 *
 * A name that is not UTF-8 (a Latin-1 `café` from an old archive) cannot be named to bwrap, whose
 * arguments are text: a denied entry with such a name, or below a directory with one, cannot be
 * mounted over. Its nearest ancestor that can be named is hidden instead; when that is the root
 * itself, the sandbox is not laid out at all (an error that names the entry).
 */
async function patternMatches(
  root: string,
  patterns: readonly string[],
): Promise<{ matches: string[][]; bareGitCode: string[] }> {
  const tests = patterns.map(patternTest);
  const out = patterns.map(() => new Set<string>());
  const bareGitCode: string[] = [];
  let seen = 0;
  /**
   * `dir` as text and as bytes; `cover`: the nameable directory to hide for what is below;
   * `active`: the patterns not matched above (each stops at its first match).
   */
  const walk = async (
    dir: string,
    raw: Buffer,
    cover: string | undefined,
    active: readonly number[],
  ): Promise<void> => {
    const names = new Set<string>();
    for (const e of await rawEntriesOf(raw)) {
      if (++seen > MAX_WALK_ENTRIES) {
        throw new Error(
          `${root} has more than ${MAX_WALK_ENTRIES} entries to search for the deny patterns ${patterns.join(', ')}; narrow the root or the patterns`,
        );
      }
      const name = e.name.toString('utf8');
      const p = join(dir, name);
      const nameable = cover === undefined && Buffer.from(name).equals(e.name);
      if (nameable) names.add(name);
      const below = nameable ? undefined : (cover ?? dir);
      const rest: number[] = [];
      for (const i of active) {
        if (!tests[i]!(p)) {
          rest.push(i);
          continue;
        }
        if (below === undefined) out[i]!.add(p);
        else if (below === root) {
          throw new Error(
            `${p} (a name that is not UTF-8, shown with U+FFFD) matches the deny pattern ${patterns[i]} and cannot be hidden by name; rename it to UTF-8`,
          );
        } else out[i]!.add(below);
      }
      if (rest.length > 0 && e.isDirectory()) {
        await walk(p, Buffer.concat([raw, Buffer.from('/'), e.name]), below, rest);
      }
    }
    // A git directory by its entries, not named `.git` (a bare repository): the protected
    // patterns name only `.git` and what lies in it, and git runs what this one's code says
    // on a `git status` in or below it (policies/git-dir.ts refuses such writes outside the
    // sandbox too).
    if (isGitDirShape(names) && !/(?:^|\/)\.git(?:\/|$)/.test(dir))
      for (const code of GIT_DIR_CODE) if (names.has(code)) bareGitCode.push(join(dir, code));
  };
  if (patterns.length > 0) {
    await walk(
      root,
      Buffer.from(root),
      undefined,
      patterns.map((_, i) => i),
    );
  }
  return { matches: out.map((set) => [...set]), bareGitCode };
}

/** Whether `d` is one of the built-in host configurations (`**\/.vscode`, `**\/.mcp.json`, ...). */
const isHostConfig = (d: DenyMeta): boolean =>
  'pattern' in d && (HOST_CONFIG_PATTERNS as readonly string[]).includes(d.pattern);

/**
 * How many of a denied path's nearest ancestors decide whether its rule matches it. A `**\/`
 * pattern of n segments is decided by the path's last n names, so by its n - 1 nearest ancestors:
 * `**\/.env` by none (a `.env` moved anywhere is still denied), `**\/.git/config` by the `.git`
 * above it. Any other rule (a literal path, an absolute glob, a `**`, brace or group inside) by
 * all of them.
 */
export function decidingAncestors(d: DenyMeta): number {
  if ('uri' in d || !d.pattern.startsWith('**/') || /[{}()]/.test(d.pattern)) return Infinity;
  const segments = d.pattern.slice(3).split('/');
  if (segments.some((s) => s.includes('**'))) return Infinity;
  return segments.length - 1;
}

/**
 * Whether what `d` denies could lie in `dir` (as the daemon picks a root's `_meta` denies): a
 * literal path inside it, a `**\/` pattern, an absolute glob whose base lies in it or holds it.
 */
export function couldLieIn(d: DenyMeta, dir: string): boolean {
  if ('uri' in d) return inside(fileURLToPath(d.uri), dir);
  if (d.pattern.startsWith('**/')) return true;
  const { base } = splitInclude(d.pattern);
  return inside(base, dir) || inside(dir, base);
}

/**
 * The denies the sandbox lays out in a root: its `_meta`'s, and in a writable one the built-in
 * `**\/NAME` protected paths too, which the daemon leaves out of `_meta` (a read-only root is
 * read-only whole).
 */
export function rootDenies(root: Root): DenyMeta[] {
  const denies = root._meta['mcp-roots/deny'] ?? [];
  return root._meta['mcp-roots/readOnly'] ? [...denies] : withBuiltInProtected(denies);
}

/**
 * The denies the sandbox lays out in an extra path (canonical): the server's denies and
 * protected paths that could lie in it, the built-in `**\/NAME` ones among them. A `read` path
 * is read-only whole: only what is hidden counts there.
 */
export function extraPathDenies(
  rule: SandboxRule | undefined,
  path: string,
  writable: boolean,
): DenyMeta[] {
  return withBuiltInProtected(rule?.deny ?? []).filter(
    (d) => (writable || d.access === 'all') && couldLieIn(d, path),
  );
}

/**
 * The first link on the way to `p` that lies in one of `places` (canonical: the server's roots
 * and write paths), followed as the kernel does. The server may have made it, to lead a `read`
 * or `write` path anywhere, in an earlier session too, or while a root now read-only was not.
 */
async function linkItMayHaveMade(
  p: string,
  places: readonly string[],
): Promise<string | undefined> {
  const links = await linksOnTheWay(p, { lstat, readlink });
  return links.find((link) => places.some((place) => inside(link, place)));
}

/**
 * Where the server may write, or may have written while a root was writable (its read-only roots
 * included), canonical: its roots and `sandbox.write` paths. What lies there may be the server's
 * own work from an earlier session, so it never decides what a sandbox shows.
 */
export async function serverWritable(
  roots: readonly Root[],
  rule: Pick<SandboxRule, 'write'>,
): Promise<string[]> {
  return [
    ...launchRoots(roots).map((r) => r.path),
    ...(await Promise.all(rule.write.map(canonical))).flatMap((p) => p ?? []),
  ];
}

/**
 * Throws when `p`, a path kept from writes in the writable place `root`, is a symbolic link. A
 * mount lands on what a link leads to, never on the link, so the server could rename another
 * link over it, or write where it leads when that lies in its roots; and whoever reads the
 * protected name (git reading `.git/hooks`, a host reading `.vscode/`, a shell reading
 * `~/.bashrc`) follows it. Refused rather than started with the name open.
 */
async function refuseProtectedLink(
  p: string,
  root: string,
  rule: string,
  access: DenyAccess = 'write',
): Promise<void> {
  const st = await lstat(p).catch(() => undefined);
  if (st?.isSymbolicLink() !== true) return;
  const what = access === 'all' ? 'denied' : 'protected from writes';
  throw new Error(
    `${p} is a symbolic link, and ${what} (${rule}): in the writable root ${root} the server could put another link in its place or write where it leads, which the sandbox cannot prevent for a link. Replace the link with a copy of what it leads to (or remove it, if you did not make it: a server may have), or keep it out of the server's writable roots`,
  );
}

/**
 * Throws when a link on the way to the literal deny `d` as written (`~/.bashrc` a link to a
 * dotfiles copy, `~/.config` a link) lies in the writable place `root`: the layout binds where
 * the path leads, and the server could re-point the link, which whatever reads the path by its
 * name (a shell, the daemon reading its policy) follows.
 */
function refuseLinkOnTheWay(d: { uri: string; links?: string[] }, root: string): void {
  const link = d.links?.find((l) => l !== root && inside(l, root));
  if (link === undefined) return;
  throw new Error(
    `${link} is a symbolic link on the way to ${fileURLToPath(d.uri)}, which is protected from writes: in the writable root ${root} the server could point it elsewhere, and whatever reads the protected path by its name would follow. Replace the link with what it leads to (or remove it, if you did not make it: a server may have), or keep it out of the server's writable roots`,
  );
}

/** The denied and write-protected paths inside one root that exist now, and what decides them. */
async function rootHoles(
  root: string,
  denies: readonly DenyMeta[],
  /** A writable place: a `.git` file there (GIT_POINTER) is made read-only too. */
  writable: boolean,
): Promise<{
  hidden: SandboxMounts['hidden'];
  readOnly: string[];
  pinned: string[];
  /** The host configurations (`.vscode`, `.mcp.json`, ...) made read-only. */
  hostConfig: string[];
}> {
  const hidden: SandboxMounts['hidden'] = [];
  const readOnly: string[] = [];
  const pinned: string[] = [];
  const hostConfig: string[] = [];
  const patterns = denies.flatMap((d) => ('pattern' in d ? [d.pattern] : []));
  const { matches, bareGitCode } = await patternMatches(
    root,
    writable ? [...patterns, GIT_POINTER] : patterns,
  );
  // A `.git` file names the git directory git reads; a `.git` directory is the repository,
  // which a git server writes (what in it runs code is among the denies above).
  for (const p of writable ? matches.pop()! : []) {
    await refuseProtectedLink(p, root, GIT_POINTER);
    if ((await holeKind(p)) === false) readOnly.push(p);
  }
  // A bare repository's code entries, as the patterns make a `.git` directory's: read-only, and
  // the directory held where it is (a missing entry is deny-watch.ts's to move aside).
  if (writable) {
    for (const p of bareGitCode) {
      await refuseProtectedLink(p, root, "a bare repository's code");
      if ((await holeKind(p)) === undefined) continue;
      readOnly.push(p);
      pinned.push(dirname(p));
    }
  }
  let next = 0;
  for (const d of denies) {
    const paths = 'uri' in d ? [fileURLToPath(d.uri)] : matches[next++]!;
    if (writable && 'uri' in d) refuseLinkOnTheWay(d, root);
    for (const p of paths) {
      if (!inside(p, root) || p === root) continue;
      // Denied whole or kept from writes, alike: a write-protected name the policy denies
      // outright (`deny: [**/.claude]`) is no less read by its name outside.
      if (writable) {
        const rule = 'pattern' in d ? d.pattern : fileURLToPath(d.uri);
        await refuseProtectedLink(p, root, rule, d.access);
      }
      const dir = await holeKind(p);
      if (dir === undefined) continue;
      if (d.access === 'all') hidden.push({ path: p, dir });
      else readOnly.push(p);
      // A host's configuration is found by where it stands: a project renamed away (its
      // read-only `.vscode` moving with it) and made again with a `.vscode` of the server's
      // is the person's project to the host (an attacker pass). Every directory above it is
      // held in place.
      const held = isHostConfig(d) ? Infinity : decidingAncestors(d);
      pinned.push(...ancestors(p).slice(0, held));
      if (writable && d.access === 'write' && isHostConfig(d)) hostConfig.push(p);
    }
  }
  return { hidden, readOnly, pinned, hostConfig };
}

/** How many entries of one host configuration are looked at for links (a few files, usually). */
const MAX_CONFIG_ENTRIES = 2_000;

/**
 * Throws when the host configuration `config` (read-only in the sandbox) holds a symbolic link
 * that leads out of it into a place the server may write (`writable`): the host reads
 * `.claude/settings.json -> ../config/claude.json` through the link, and the server writes the
 * file it leads to (an attacker pass). A link that leads nowhere yet counts where its target would
 * be made.
 */
async function refuseLinkOutOfConfig(config: string, writable: readonly string[]): Promise<void> {
  let seen = 0;
  const walk = async (dir: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (++seen > MAX_CONFIG_ENTRIES) {
        throw new Error(
          `${config} has more than ${MAX_CONFIG_ENTRIES} entries to look through for links; keep it out of the server's writable roots`,
        );
      }
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      // A file with a second name elsewhere is that file too: written there, read here.
      if (e.isFile() && ((await lstat(p).catch(() => undefined))?.nlink ?? 1) > 1) {
        throw new Error(
          `${p} in a host's configuration has another name (a hard link), which may lie where the server writes: the host would read what the server writes there. Replace it with a copy of itself (cp --remove-destination), or keep the configuration out of the server's writable roots`,
        );
      }
      if (!e.isSymbolicLink()) continue;
      // Gone since it was listed: nothing to follow.
      const text = await readlink(p).catch(() => undefined);
      if (text === undefined) continue;
      const target = (await canonical(p)) ?? whereItWouldBe(resolve(dir, text));
      if (inside(target, config)) continue;
      const place = writable.find((w) => inside(target, w));
      if (place === undefined) continue;
      throw new Error(
        `${p} is a symbolic link in a host's configuration, to ${target} in the writable place ${place}: the host reads what the server writes there. Replace the link with a copy of what it leads to (or remove it, if you did not make it: a server may have), or keep the configuration out of the server's writable roots`,
      );
    }
  };
  // A file (`.mcp.json`) holds no link; a link in the configuration's own place is refused above.
  if ((await lstat(config).catch(() => undefined))?.isDirectory() === true) await walk(config);
}

/** Everything the sandbox shows for these roots, this rule and this launch. */
export async function sandboxMounts(input: {
  roots: readonly Root[];
  rule: SandboxRule;
  launch: Launch;
  program: ProgramContext;
  /** The daemon's socket: hidden even when it lies inside a root. */
  daemonSocket?: string | undefined;
  disableUserns: boolean;
  /**
   * Where each `sandbox.read` and `sandbox.write` path led when first laid out in this session
   * (filled here). A link on the way may lie in a root the server writes: re-pointed, it would
   * bind whatever it names at the next start, so a path that leads elsewhere now is left out.
   */
  pins?: Map<string, string>;
  /** Told of each path left out so. */
  leftOut?: (message: string) => void;
  /**
   * The person's git directories as the deny watch noted them at the start, where they are now
   * (git-notes.ts): their code entries are read-only in a writable place whatever the directory's
   * shape now (a bare repository whose `HEAD` the server renamed away is one to git again once
   * it is renamed back).
   */
  gitDirs?: readonly string[];
}): Promise<SandboxMounts> {
  const { system, extra } = await systemMounts();
  // A link there is not followed to a `read` or `write` path.
  const itsOwn = await serverWritable(input.roots, input.rule);
  // A path that is denied, or lies in a denied one, is not mounted (as the daemon drops such a
  // root); for writing, a write-denied or protected one neither.
  const deniedAt = (path: string, writes: boolean): DenyMeta | undefined =>
    withBuiltInProtected(input.rule.deny ?? []).find(
      (d) => (writes || d.access === 'all') && [path, ...ancestors(path)].some(denyTest(d)),
    );
  const existing = async (paths: readonly string[], writes: boolean): Promise<string[]> => {
    const out: string[] = [];
    for (const p of paths) {
      const planted = await linkItMayHaveMade(p, itsOwn);
      if (planted !== undefined) {
        input.leftOut?.(
          `the sandbox path ${JSON.stringify(p)} goes through the link ${JSON.stringify(planted)}, which lies in the server's roots or write paths (it may have made it): it is left out; name the path the link leads to in the policy instead`,
        );
        continue;
      }
      const now = await canonical(p);
      const first = input.pins?.get(p);
      // One missing at first is pinned where it would be made: a link made there later is not
      // followed either.
      if (first === undefined) input.pins?.set(p, now ?? whereItWouldBe(p));
      if (now === undefined) continue;
      if (first !== undefined && first !== now) {
        input.leftOut?.(
          `the sandbox path ${JSON.stringify(p)} led to ${JSON.stringify(first)} when this session began and leads to ${JSON.stringify(now)} now (a link on the way changed): it is left out until a new session`,
        );
        continue;
      }
      const denied = deniedAt(now, writes);
      if (denied !== undefined) {
        const what = 'pattern' in denied ? denied.pattern : fileURLToPath(denied.uri);
        input.leftOut?.(
          `the sandbox path ${JSON.stringify(p)} is ${denied.access === 'all' ? 'denied' : 'protected from writing'} (${JSON.stringify(what)}): it is left out`,
        );
        continue;
      }
      out.push(now);
    }
    return out;
  };
  const roots = [];
  const hidden: SandboxMounts['hidden'] = [];
  const readOnly: string[] = [];
  const pinned: string[] = [];
  const hostConfig: string[] = [];
  for (const [i, r] of launchRoots(input.roots).entries()) {
    // The daemon lists each root by its canonical path. One that vanished since cannot be
    // mounted; one that a link now stands in (its own place or an ancestor's) must not be:
    // bwrap follows the link, and would show what it leads to with the root's access.
    if ((await canonical(r.path)) !== r.path) continue;
    roots.push(r);
    const holes = await rootHoles(r.path, rootDenies(input.roots[i]!), !r.readOnly);
    hostConfig.push(...holes.hostConfig);
    hidden.push(...holes.hidden);
    if (!r.readOnly) readOnly.push(...holes.readOnly);
    pinned.push(...holes.pinned);
    // Nothing an include pattern could match may be created or changed (sandbox-includes.ts).
    if (!r.readOnly) {
      const held = await includeHolds(r.path, input.roots[i]!._meta['mcp-roots/include'] ?? []);
      readOnly.push(...held.readOnly);
      pinned.push(...held.pinned);
    }
  }
  const ruleRead = await existing(input.rule.read, false);
  const read = [...extra, ...ruleRead];
  const write = await existing(input.rule.write, true);
  /** What the policy denies in `dir`, which the server may only read, hidden as in a read-only root. */
  const hideDeniedIn = async (dir: string) => {
    const holes = await rootHoles(dir, extraPathDenies(input.rule, dir, false), false);
    hidden.push(...holes.hidden);
    pinned.push(...holes.pinned);
  };
  for (const r of ruleRead) await hideDeniedIn(r);
  // An extra writable path is writable as a root is: nothing an include pattern could match may be
  // created or changed there either.
  for (const w of write) {
    const held = await includeHolds(w, input.rule.include ?? [], 'write');
    readOnly.push(...held.readOnly);
    pinned.push(...held.pinned);
    // Denies and protected paths too, as in a writable root: those that could lie in it.
    const holes = await rootHoles(w, extraPathDenies(input.rule, w, true), true);
    hostConfig.push(...holes.hostConfig);
    hidden.push(...holes.hidden);
    readOnly.push(...holes.readOnly);
    pinned.push(...holes.pinned);
  }
  const writable = [...roots.filter((r) => !r.readOnly).map((r) => r.path), ...write];
  for (const config of hostConfig) await refuseLinkOutOfConfig(config, writable);
  for (const dir of input.gitDirs ?? []) {
    if (!writable.some((w) => inside(dir, w))) continue;
    for (const code of GIT_DIR_CODE) {
      const p = join(dir, code);
      if (readOnly.includes(p) || (await holeKind(p)) === undefined) continue;
      readOnly.push(p);
      pinned.push(dir);
    }
  }
  const given: string[] = [];
  let shown: readonly string[] = [];
  const minimal = await programPaths(input.launch.command, input.launch.args, {
    ...input.program,
    serverOwn: itsOwn,
    given: (p) => given.push(p),
    every: (paths) => (shown = paths),
    ...(input.leftOut === undefined ? {} : { leftOut: input.leftOut }),
  });
  const program = minimal.filter(
    (p) => !system.some((s) => s.kind !== 'symlink' && inside(p, s.path)),
  );
  // The program's directories (its package, a Node's modules) show what the policy denies in
  // them hidden, as a `read` path does: a script in a workspace shows the workspace, other
  // projects' `.env` files with it (an attacker pass).
  const programDirs: string[] = [];
  for (const p of program) {
    if ((await isDir(p)) !== true) continue;
    await hideDeniedIn(p);
    programDirs.push(p);
  }
  // Every place bound into the sandbox: the daemon's socket in any of them is hidden (one in a
  // program's directory, a Node installed in ~/.local beside the daemon's state, was reachable:
  // an attacker pass granted itself a root through it).
  const visible = [...roots.map((r) => r.path), ...read, ...write, ...program];
  // Where the socket is, as the bound places are: canonical. A directory above it reached through
  // a link hid nothing, and the server granted itself roots (an attacker pass).
  const socket = input.daemonSocket === undefined ? undefined : canonicalFile(input.daemonSocket);
  if (socket !== undefined && visible.some((v) => inside(socket, v))) {
    // Its whole directory, which holds nothing else the server needs: a mount on the socket file
    // alone is dropped by the kernel when a daemon started again replaces the file, and the
    // server would reach the new daemon (test/hardening/sandbox-daemon-socket.test.ts). Only a
    // directory that is, or holds, a visible path keeps its entries, and the file is hidden.
    const socketDir = dirname(socket);
    if (visible.some((v) => inside(v, socketDir))) {
      // A mount on the file alone goes when a restarted daemon renames a new socket into place,
      // and a server that may connect to Unix sockets would reach it (an attacker pass).
      if (input.rule.unixSockets === true) {
        throw new Error(
          `mcp-rootsd's socket ${socket} lies in a directory that also holds or is what the server is shown, and a server that may use Unix sockets (sandbox.unixSockets) could reach the daemon once it restarts: give the daemon and its clients a socket elsewhere (--socket, MCP_ROOTS_SOCKET), or take unixSockets away`,
        );
      }
      if ((await isDir(socket)) === false) hidden.push({ path: socket, dir: false });
    } else if ((await isDir(socketDir)) === true) {
      hidden.push({ path: socketDir, dir: true });
    }
    pinned.push(...ancestors(socket));
  }
  // A nested root, an extra path and the program are where they are by their full path.
  for (const p of [...roots.map((r) => r.path), ...ruleRead, ...write, ...program])
    pinned.push(...ancestors(p));
  const links = await programLinks(given, [...visible, ...system.map((s) => s.path)], itsOwn);
  return {
    system,
    procReadOnly: await procReadOnly(),
    read,
    roots,
    write,
    program,
    programCheck: { shown: [...shown], given },
    programLinks: links,
    programDirs,
    hidden,
    readOnly,
    pinned,
    network: input.rule.network,
    disableUserns: input.disableUserns,
  };
}
