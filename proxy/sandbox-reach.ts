/**
 * Whether a change takes access away from a sandboxed server. Its mounts are fixed when it
 * starts, so until it exits it keeps everything they gave it, and it may hand an open directory
 * or a socket to whatever can still reach it. A restart that only adds (a new root, a grant) may
 * let the old server finish its calls; one that removes anything stops it at once.
 */
import type { Root, SandboxRule } from '../common/types.js';

/** What a sandboxed server's mounts were laid out from. */
export interface Reach {
  roots: readonly Root[];
  sandbox: SandboxRule | undefined;
}

/**
 * True unless every root of `before` is in `after` unchanged (the same URI with the same
 * read-only flag and holes: its `_meta` equal) and the sandbox rule is the same. A root that
 * became writable counts too: the comparison is of what the mounts say, not of which is wider.
 */
export function takesAccessAway(before: Reach, after: Reach): boolean {
  if (JSON.stringify(before.sandbox) !== JSON.stringify(after.sandbox)) return true;
  const now = new Map(after.roots.map((r) => [r.uri, JSON.stringify(r._meta ?? null)]));
  return before.roots.some((r) => now.get(r.uri) !== JSON.stringify(r._meta ?? null));
}
