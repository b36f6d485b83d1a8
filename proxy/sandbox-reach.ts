/**
 * Whether a change takes access away from a sandboxed server. Its mounts are fixed when it
 * starts, so until it exits it keeps everything they gave it, and it may hand an open directory
 * or a socket to whatever can still reach it. A restart that only adds (a new root, a grant) may
 * let the old server finish its calls; one that removes anything stops it at once.
 */
import { fileURLToPath } from 'node:url';
import type { Root, SandboxRule } from '../common/types.js';
import { inside } from './sandbox-paths.js';

/** What a sandboxed server's mounts were laid out from. */
export interface Reach {
  roots: readonly Root[];
  sandbox: SandboxRule | undefined;
  /** The sandbox's `write` paths, as written and canonical (the roots are canonical). */
  writes: readonly string[];
}

/**
 * True unless every root of `before` is in `after` unchanged (the same URI with the same
 * read-only flag and holes: its `_meta` equal), every new root that overlaps an old one (inside
 * it or holding it) has that root's `_meta`, and the sandbox rule is the same. A root that
 * became writable counts too: the comparison is of what the mounts say, not of which is wider.
 * A new read-only root inside a writable one narrows it, though every old root is still there;
 * so does any new root overlapping a `write` path.
 */
export function takesAccessAway(before: Reach, after: Reach): boolean {
  if (JSON.stringify(before.sandbox) !== JSON.stringify(after.sandbox)) return true;
  const meta = (r: Root) => JSON.stringify(r._meta ?? null);
  const now = new Map(after.roots.map((r) => [r.uri, meta(r)]));
  if (before.roots.some((r) => now.get(r.uri) !== meta(r))) return true;
  const was = new Set(before.roots.map((r) => r.uri));
  const paths = (roots: readonly Root[]) => roots.map((r) => ({ path: pathOf(r), meta: meta(r) }));
  const old = paths(before.roots);
  const writes = before.writes;
  return paths(after.roots.filter((r) => !was.has(r.uri))).some(
    (n) =>
      old.some((o) => (inside(n.path, o.path) || inside(o.path, n.path)) && o.meta !== n.meta) ||
      // In a `write` path: its root's read-only flag or holes narrow what the path gave.
      writes.some((w) => inside(n.path, w) || inside(w, n.path)),
  );
}

const pathOf = (r: Root): string => {
  try {
    return fileURLToPath(r.uri);
  } catch {
    return r.uri; // not a file URI: overlaps nothing but itself
  }
};
