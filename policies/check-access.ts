/**
 * The access decision for one path (`roots/check`, `rootsctl check`): canonicalise it, find the
 * root that holds it, apply the denies and protected paths, and say why in words a person reads.
 */
import { isAbsolute } from 'node:path';
import { errnoCode } from '../common/errors.js';
import type { CheckResult, RefusalKind, Root } from '../common/types.js';
import { covers, describeRule } from './deny.js';
import { linkItself, mayHoldEntries, positionDependent } from './descendants.js';
import { equivalentPaths, MAX_EQUIVALENT_PATHS } from './equivalent-names.js';
import { gitDirWrite } from './git-dir.js';
import type { FsView, RootEntry } from './model.js';
import { canonicalizeLoose, isInsideOrEqual, normalizeLexically, physicalDots } from './paths.js';
import { throughProc } from './process-paths.js';
import type { ServerView } from './server-view.js';
import { holdingRoot, readOnlyInside } from './sorted-roots.js';

/** Whether `server` (whose roots and denies are `view`) may read or write `path`. */
export async function checkAccess(
  fs: FsView,
  view: ServerView,
  server: string,
  path: string,
  access: 'read' | 'write',
): Promise<CheckResult> {
  const no = (reason: string): CheckResult => ({
    allowed: false,
    access,
    reason,
    refusal: 'invalid',
  });
  if (path.includes('\0')) return no('the path contains a NUL byte');
  if (!isAbsolute(path)) return no(`${path} is not an absolute path; give the full path`);
  // A `..` after a link into /proc is taken from where the link leads in the daemon, which the
  // path below no longer shows: looked at here, with the path as written.
  if (path.includes('/..')) {
    const proc = await throughProc(fs, path);
    if (proc !== undefined) return no(proc);
  }
  // `..` is where the kernel takes it, never the text before it: `rw/link/../x` opens the `x`
  // beside the link's target.
  const physical = await physicalDots(fs, path).catch(() => undefined);
  if (physical === undefined) {
    return no(
      `${path} has a .. segment after a path that does not lead to a directory; give the path without ..`,
    );
  }
  if (physical !== path) {
    const result = await checkAccess(fs, view, server, physical, access);
    return { ...result, reason: `${path} leads to ${physical}: ${result.reason}` };
  }
  const written = normalizeLexically(path);
  let canonical: string;
  try {
    canonical = await canonicalizeLoose(fs, written);
  } catch (err) {
    return no(`cannot resolve ${path} (${errnoCode(err) ?? String(err)})`);
  }
  const first = await judge(fs, view, server, path, canonical, access);
  if (!first.allowed) return first;
  // A server may open a Unicode-equivalent name for one that does not exist: every path it may
  // open must be allowed. The whole path in NFC and in NFD (a server that normalises what it is
  // given), and each equivalent name found on disk (the filesystem server, name by name:
  // equivalent-names.ts).
  const others = new Map<string, string>();
  if (/[^\p{ASCII}]/u.test(path)) {
    for (const form of ['NFC', 'NFD'] as const)
      others.set(normalizeLexically(path.normalize(form)), `its ${form} spelling`);
  }
  let equivalents: string[] | 'too-many';
  try {
    equivalents = await equivalentPaths(fs, written);
  } catch (err) {
    return no(`cannot look for names equivalent to ${path} (${errnoCode(err) ?? String(err)})`);
  }
  if (equivalents === 'too-many') {
    return no(
      `${path} does not exist, and more than ${MAX_EQUIVALENT_PATHS} Unicode-equivalent paths exist on disk that a server may open instead; give the path as it is on disk`,
    );
  }
  for (const other of equivalents) others.set(other, `${other}, a Unicode-equivalent name on disk`);
  for (const [other, what] of others) {
    const otherCanonical = await canonicalizeLoose(fs, other).catch(() => canonical);
    if (otherCanonical === canonical) continue;
    const result = await judge(fs, view, server, other, otherCanonical, access);
    if (!result.allowed) return { ...result, reason: `${path} may open ${what}: ${result.reason}` };
  }
  return first;
}

/** The decision for `path` (lexically normal), whose canonical path is `canonical`. */
async function judge(
  fs: FsView,
  view: ServerView,
  server: string,
  path: string,
  canonical: string,
  access: 'read' | 'write',
): Promise<CheckResult> {
  const proc = await throughProc(fs, path, canonical);
  if (proc !== undefined) return { allowed: false, access, reason: proc, refusal: 'invalid' };
  const holds = access === 'write' && (await mayHoldEntries(fs, canonical));
  const first = decide(view, server, path, canonical, access, holds);
  if (access !== 'write') return first;
  // Refused for a reason a grant would lift (outside every root, read-only), a write is still
  // judged as one no grant lifts: otherwise the person is asked, and the grant refused after.
  if (!first.allowed && !isLiftable(first)) return first;
  // A git directory assembled outside `.git` runs its code as the repository's does.
  const git = await gitDirWrite(fs, canonical);
  if (git !== undefined) {
    const { root } = first;
    return {
      allowed: false,
      access,
      reason: `writing ${path} is refused: ${git}`,
      refusal: 'denied',
      ...(root ? { root } : {}),
    };
  }
  // A rename replaces a symlink itself, not its target: judge where the link stands too.
  const self = await linkItself(fs, normalizeLexically(path));
  if (self !== undefined && self !== canonical) {
    const result = decide(view, server, self, self, access, false);
    if (!result.allowed && (first.allowed || !isLiftable(result)))
      return { ...result, reason: `${path} is a symlink, and replacing it: ${result.reason}` };
  }
  return first;
}

/** A refusal a grant would lift: the path is outside every root, or in a read-only one. */
function isLiftable(result: CheckResult): boolean {
  return !result.allowed && (result.refusal === 'outside' || result.refusal === 'read-only');
}

/** The decision for one canonical path, with no filesystem access. */
function decide(
  view: ServerView,
  server: string,
  path: string,
  canonical: string,
  access: 'read' | 'write',
  /** The path is a directory or missing: a write of it may move a whole tree (a rename). */
  holds: boolean,
): CheckResult {
  const no = (reason: string, root?: Root, refusal: RefusalKind = 'denied'): CheckResult =>
    root
      ? { allowed: false, access, reason, refusal, canonical, root }
      : { allowed: false, access, reason, refusal, canonical };
  // The nearest root at or above the path (the longest), by binary search in the sorted roots.
  const best = holdingRoot(view.info, canonical);
  const shown = canonical === path ? path : `${path} (${canonical})`;
  if (!best) {
    // A path no root holds may still be one a deny covers: that refusal is a deny, never
    // something a person is asked to lift (a grant would not lift it either).
    const deny = view.denies.find(
      (d) =>
        ((d.access === 'all' || access === 'write') && covers(d, canonical)) ||
        (access === 'write' && holds && positionDependent(d, canonical)),
    );
    if (deny !== undefined)
      return no(`${shown} is outside every root of ${server}, and denied by ${describeRule(deny)}`);
    return no(
      `${shown} is outside every root of ${server}${expiredHint(view, canonical)}`,
      undefined,
      'outside',
    );
  }
  for (const d of view.denies) {
    if (d.access === 'all' && covers(d, canonical))
      return no(`${shown} is denied by ${describeRule(d)}`, best.root);
  }
  if (access === 'write') {
    for (const d of view.denies) {
      if (covers(d, canonical))
        return no(`writing ${shown} is denied by ${describeRule(d)}`, best.root);
      if (holds && positionDependent(d, canonical)) {
        return no(
          `writing ${shown} as a whole (moving, renaming or replacing it) could carry what ${describeRule(d)} covers inside it, in or out`,
          best.root,
        );
      }
    }
    const nested = holds ? readOnlyInside(view.info, canonical) : undefined;
    if (nested) {
      return no(
        `writing ${shown} as a whole (moving, renaming or replacing it) would move the read-only root ${nested.root.uri} inside it`,
        best.root,
      );
    }
    if (best.readOnly)
      return no(
        `${shown} is in the read-only root ${best.root.uri}, from ${describeRoot(best.rule)}`,
        best.root,
        'read-only',
      );
  }
  return {
    allowed: true,
    access,
    reason: `${shown} is inside the root ${best.root.uri}, from ${describeRoot(best.rule)}`,
    canonical,
    root: best.root,
  };
}

/**
 * The expired entry a path lies in, named, so that "outside every root" does not leave the person
 * looking for the root they remember writing. By the entry's written path, not a canonical one:
 * an expired entry is not resolved, so a path reached through a link to it is not named.
 */
function expiredHint(view: ServerView, canonical: string): string {
  let best: RootEntry | undefined;
  for (const e of view.expired) {
    if (!isInsideOrEqual(canonical, e.abs!)) continue;
    if (best === undefined || e.abs!.length > best.abs!.length) best = e;
  }
  if (best === undefined) return '';
  return `: its ${describeRoot(best)} expired at ${new Date(best.expires!).toISOString()}`;
}

/** How a root entry is named in a reason: what was written, and where. */
function describeRoot(entry: RootEntry): string {
  const { file, line, column } = entry.pos;
  return `root ${entry.path} (${file}:${line}:${column})`;
}
