/**
 * Roots that end: a grant, or a policy root with `expires:`. The daemon takes an expired root out
 * of its list and tells the proxy, but a sandbox's mounts are the proxy's to end: with the daemon
 * down or stuck when a root expires, nobody would tell it, and the server would keep the mount for
 * as long as it runs. So the proxy plans from the roots that have not expired by its own clock,
 * and plans again when the next of the running server's roots expires (supervisor.ts).
 */
import type { Root } from '../common/types.js';

/** When `root` expires, in ms since the epoch; undefined when it does not (or says nonsense). */
function expiresAt(root: Root): number | undefined {
  const at = root._meta['mcp-roots/expiresAt'];
  if (typeof at !== 'string') return undefined;
  const ms = Date.parse(at);
  // An expiry the proxy cannot read is taken as past: the daemon writes only valid ones.
  return Number.isNaN(ms) ? -Infinity : ms;
}

/** `roots` without those expired at `now`. */
export function unexpired(roots: readonly Root[], now: number): Root[] {
  return roots.filter((r) => (expiresAt(r) ?? Infinity) > now);
}

/** The earliest expiry after `now` among `roots`, or undefined when none of them ends. */
export function nextExpiry(roots: readonly Root[], now: number): number | undefined {
  let next: number | undefined;
  for (const r of roots) {
    const at = expiresAt(r);
    if (at !== undefined && at > now && (next === undefined || at < next)) next = at;
  }
  return next;
}
