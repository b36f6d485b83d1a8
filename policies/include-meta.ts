/**
 * The include patterns a sandboxed server's root must not let it add to: `_meta['mcp-roots/include']`.
 *
 * A file an include pattern matches is policy the moment it exists. The daemon's own checks refuse
 * a write there (protected.ts), but a sandboxed server writes with its own system calls, so the
 * proxy must lay the sandbox out so that nothing such a pattern could match can be created or
 * changed (proxy/sandbox-includes.ts). These are not sent as denies: a deny pattern is walked for
 * and watched through the whole root, and a broad base (the home) would cost that for nothing.
 */
import type { DenyRule } from './deny.js';
import { isInsideOrEqual, isStrictlyInside } from './paths.js';

/** The include rules among a resolution's protected rules (one list per resolution). */
const includeRules = new WeakMap<readonly DenyRule[], DenyRule[]>();

/**
 * The include patterns (canonical absolute globs, or literal paths) whose matches could lie inside
 * `root`: a glob whose base lies in the root or holds it, a literal path strictly inside it. Beside
 * them, each pattern as written whose way to its base goes through a link in the root: a server
 * that may write there could re-point the link and move what the daemon includes, which the
 * canonical pattern does not show; the sandbox walks the written base and refuses such a link
 * (proxy/sandbox-includes.ts). Where the links could not be read, every root is named it.
 */
export function includeMeta(protectedList: readonly DenyRule[], root: string): string[] {
  let rules = includeRules.get(protectedList);
  if (rules === undefined) {
    rules = protectedList.filter((d) => d.include === true);
    includeRules.set(protectedList, rules);
  }
  const out: string[] = [];
  for (const d of rules) {
    if (d.pattern !== undefined && d.base !== undefined) {
      if (isInsideOrEqual(d.base, root) || isStrictlyInside(root, d.base)) out.push(d.pattern);
    } else if (d.literal !== undefined && isStrictlyInside(d.literal, root)) {
      out.push(d.literal);
    }
    if (d.written !== undefined && (d.links?.some((l) => isStrictlyInside(l, root)) ?? true)) {
      out.push(d.written);
    }
  }
  return [...new Set(out)];
}

/**
 * Every include pattern (canonical absolute globs, or literal paths): for a sandbox's extra
 * writable paths, which the daemon knows only as written (not canonical), so the proxy decides
 * which could match in each (proxy/sandbox-includes.ts), as it does for a root.
 */
export function allIncludes(protectedList: readonly DenyRule[]): string[] {
  const out: string[] = [];
  for (const d of protectedList) {
    if (d.include !== true) continue;
    if (d.pattern !== undefined) out.push(d.pattern);
    else if (d.literal !== undefined) out.push(d.literal);
    if (d.written !== undefined) out.push(d.written);
  }
  return [...new Set(out)];
}
