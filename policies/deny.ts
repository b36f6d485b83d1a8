/** Deny rules and protected paths as patterns over canonical paths (docs/policy.md rules 5 and 6). */
import { sep } from 'node:path';
import { DENY_GLOB, escapeGlob, globMatcher } from '../common/glob-dialect.js';
import { linksOnTheWay } from '../common/links-on-the-way.js';
import { errnoCode } from '../common/errors.js';
import type { DenyAccess } from '../common/types.js';
import { isGlob, splitGlob } from './expand.js';
import type { FsView, Pos } from './model.js';
import { canonicalizeLoose, childPath, isInsideOrEqual, selfAndAncestors } from './paths.js';

/** A compiled deny: tested against a canonical path and each of its ancestors. */
export interface DenyRule {
  source: 'deny' | 'protected';
  access: DenyAccess;
  /** What a person wrote (or the built-in rule's path), for messages. */
  display: string;
  pos?: Pos;
  /** Canonical literal path, when the deny is (also) a literal path. */
  literal?: string;
  /** Canonical absolute glob, or a `**\/` pattern. */
  pattern?: string;
  /** The pattern's canonical static base (absolute globs only). */
  base?: string;
  /** Protected policy directories: only the directory itself, not its contents. */
  entriesOnly?: boolean;
  /** Whether a root's `_meta` may list it. */
  inMeta: boolean;
  /** An include pattern: `_meta['mcp-roots/include']` names it to the sandbox (include-meta.ts). */
  include?: boolean;
  /**
   * An include pattern as written (absolute, expanded, links not followed), when links on the way
   * make it differ from the canonical one: the daemon follows the written name at every load, so
   * the sandbox must see the links too (include-meta.ts).
   */
  written?: string;
  /**
   * With `written`: where the links on the way to its base lie (common/links-on-the-way.ts), so
   * that a root is named the written pattern only when it holds one; undefined when they could
   * not be read (then every root is).
   */
  links?: string[];
  /**
   * For a literal path: the links on the way to it as written, when they make it differ from
   * `literal` (common/links-on-the-way.ts). `_meta` carries them (common-effect.ts `denyMeta`).
   */
  wayLinks?: string[];
  /** For `**\/NAME` with a plain NAME: covered iff some segment of the path is NAME. */
  segment?: string;
  match?: (path: string) => boolean;
}

/**
 * Compiled deny globs by pattern text: compiling costs a millisecond or more, and every
 * resolution compiles the same protected patterns and policy denies again.
 */
const matchers = new Map<string, (path: string) => boolean>();
function matcher(pattern: string): (path: string) => boolean {
  let m = matchers.get(pattern);
  if (!m) {
    m = globMatcher(pattern, DENY_GLOB);
    if (matchers.size >= 10_000) matchers.clear();
    matchers.set(pattern, m);
  }
  return m;
}

/**
 * A built-in pattern's matcher, compiled when first asked: `**\/.git/hooks` and `**\/.git/config`
 * are tried only on a path with a `hooks` or `config` segment (`ancestorMatches`), and compiling
 * them was most of what a start-up (`rootsctl validate`, the daemon's first resolution) spent in
 * picomatch. A policy's own patterns are compiled at once, so that a pattern picomatch refuses
 * fails the resolution, not a later check.
 */
function lazyMatcher(pattern: string): (path: string) => boolean {
  let m: ((path: string) => boolean) | undefined;
  return (path) => (m ??= matcher(pattern))(path);
}

/** Compile a deny path (already expanded to absolute, or a `**\/` pattern). */
export async function compileDeny(
  fs: FsView,
  abs: string,
  access: DenyAccess,
  extra: Pick<DenyRule, 'source' | 'display' | 'pos' | 'entriesOnly' | 'inMeta' | 'include'>,
): Promise<DenyRule> {
  const rule: DenyRule = { ...extra, access };
  if (abs.startsWith('**/')) {
    rule.pattern = abs;
    const rest = abs.slice(3);
    if (rest !== '' && !rest.includes('/') && !isGlob(rest)) {
      // `**\/NAME`: a path matches when its last segment is NAME.
      const name = rest;
      rule.segment = name;
      rule.match = (p) => p.slice(p.lastIndexOf(sep) + 1) === name;
    } else {
      const m = extra.source === 'protected' ? lazyMatcher(abs) : matcher(abs);
      rule.match = (p) => m(p.slice(1));
    }
    return rule;
  }
  rule.literal = await canonicalOrWritten(fs, abs, rule);
  if (isGlob(abs)) {
    const { base, glob } = splitGlob(abs);
    const canonBase = await canonicalOrWritten(fs, base, rule);
    rule.base = canonBase;
    // The canonical base is a literal name: a `Tax {a,b}` or `[draft]` in it is no glob.
    rule.pattern = childPath(escapeGlob(canonBase), glob);
    rule.match = matcher(rule.pattern);
  }
  if (!isGlob(abs) && abs !== rule.literal && fs.readlink !== undefined) {
    const readlink = fs.readlink.bind(fs);
    const links = await linksOnTheWay(abs, { lstat: (p) => fs.lstat(p), readlink });
    if (links.length > 0) rule.wayLinks = links;
  }
  if (extra.include === true && abs !== (rule.pattern ?? rule.literal)) {
    rule.written = abs;
    const readlink = fs.readlink?.bind(fs);
    if (readlink !== undefined) {
      const base = isGlob(abs) ? splitGlob(abs).base : abs;
      rule.links = await linksOnTheWay(base, { lstat: (p) => fs.lstat(p), readlink });
    }
  }
  return rule;
}

/** Rules compiled as written because a symlink loop left their path leading nowhere. */
const looped = new WeakSet<DenyRule>();

/** Whether `rule` was compiled as written past a symlink loop (a later look must compile it afresh). */
export function throughLoop(rule: DenyRule): boolean {
  return looped.has(rule);
}

/**
 * Where `path` leads; as written when a symlink loop on the way (ELOOP) leaves it leading nowhere.
 * Nothing can be opened through the loop, so the path as written is all the deny can cover; a
 * throw here failed the whole resolution instead (a loop on `~/.config` failed every one, as the
 * protected paths below it are compiled each time, and the daemon never followed the fix).
 */
async function canonicalOrWritten(fs: FsView, path: string, rule: DenyRule): Promise<string> {
  try {
    return await canonicalizeLoose(fs, path);
  } catch (err) {
    if (errnoCode(err) !== 'ELOOP') throw err;
    looped.add(rule);
    return path;
  }
}

/** True when the rule matches the path itself (not its ancestors). */
function matchesExactly(rule: DenyRule, path: string): boolean {
  return rule.literal === path || (rule.match?.(path) ?? false);
}

/** True when the rule covers the path: it or one of its ancestors matches. */
export function covers(rule: DenyRule, path: string): boolean {
  if (rule.entriesOnly) return matchesExactly(rule, path);
  if (rule.literal !== undefined && isInsideOrEqual(path, rule.literal)) return true;
  if (rule.match === undefined) return false;
  // An absolute glob matches only below its base, and so does any ancestor that matches.
  if (rule.base !== undefined && !isInsideOrEqual(path, rule.base)) return false;
  if (rule.segment !== undefined) return (path + sep).includes(sep + rule.segment + sep);
  return ancestorMatches(rule, path);
}

/**
 * Whether the rule's glob matches the path or an ancestor. Only an ancestor whose last segment
 * could match the pattern's last segment is tried, so a path of thousands of components costs
 * one pass over its text, not a glob match per ancestor.
 */
function ancestorMatches(rule: DenyRule, path: string): boolean {
  const last = rule.pattern === undefined ? undefined : lastLiteral(rule.pattern);
  if (last === undefined) return selfAndAncestors(path).some((p) => rule.match!(p));
  const needle = sep + last;
  for (let at = path.indexOf(needle); at !== -1; at = path.indexOf(needle, at + 1)) {
    const end = at + needle.length;
    if ((end === path.length || path.charCodeAt(end) === 0x2f) && rule.match!(path.slice(0, end)))
      return true;
  }
  return false;
}

const lastLiterals = new Map<string, string | undefined>();

/** The pattern's last segment when it has no glob syntax (most deny patterns end in a name). */
function lastLiteral(pattern: string): string | undefined {
  if (lastLiterals.has(pattern)) return lastLiterals.get(pattern);
  const seg = pattern.slice(pattern.lastIndexOf('/') + 1);
  const out = seg !== '' && !isGlob(seg) && !seg.includes('\\') ? seg : undefined;
  if (lastLiterals.size > 10_000) lastLiterals.clear();
  lastLiterals.set(pattern, out);
  return out;
}

/** How a rule is named in a reason: what was written, and where. */
export function describeRule(rule: DenyRule): string {
  const where = rule.pos ? ` (${rule.pos.file}:${rule.pos.line}:${rule.pos.column})` : '';
  if (rule.source === 'protected') return `protected path ${rule.display}${where}`;
  return `deny ${rule.display}${rule.access === 'write' ? ' (access: write)' : ''}${where}`;
}
