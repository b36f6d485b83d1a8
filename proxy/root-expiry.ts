/**
 * Roots that end: a grant, or a policy root with `expires:`, and a root writable only through
 * such an entry (`mcp-roots/writableUntil`: a write grant of a path a read-only entry names too).
 * The daemon changes an expired root in its list and tells the proxy, but a sandbox's mounts are
 * the proxy's to end: with the daemon down or stuck at that moment, nobody would tell it, and the
 * server would keep the mount, or its writing, for as long as it runs. So the proxy plans from
 * the roots as they are by its own clock, and plans again when the next of the running server's
 * roots changes (supervisor.ts).
 */
import type { Root } from '../common/types.js';

/**
 * A time in `_meta` as ms since the epoch; undefined when absent. One the proxy cannot read is
 * taken as past: the daemon writes only valid ones.
 */
function timeOf(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? -Infinity : ms;
}

const expiresAt = (root: Root) => timeOf(root._meta['mcp-roots/expiresAt']);

/** When a writable root turns read-only before it ends; undefined when it does not. */
const writableUntil = (root: Root) =>
  root._meta['mcp-roots/readOnly'] ? undefined : timeOf(root._meta['mcp-roots/writableUntil']);

/** `roots` as they are at `now`: without those expired, read-only where their writing ended. */
export function rootsAt(roots: readonly Root[], now: number): Root[] {
  const out: Root[] = [];
  for (const root of roots) {
    if ((expiresAt(root) ?? Infinity) <= now) continue;
    if ((writableUntil(root) ?? Infinity) > now) out.push(root);
    else {
      const { 'mcp-roots/writableUntil': _ended, ...meta } = root._meta;
      out.push({ ...root, _meta: { ...meta, 'mcp-roots/readOnly': true } });
    }
  }
  return out;
}

/**
 * The earliest time at which one of `roots` expires or turns read-only, or undefined when none
 * does. A time already past counts: a root planned before it expired, and run after.
 */
export function nextChange(roots: readonly Root[]): number | undefined {
  let next: number | undefined;
  for (const r of roots) {
    for (const at of [expiresAt(r), writableUntil(r)]) {
      if (at !== undefined && (next === undefined || at < next)) next = at;
    }
  }
  return next;
}
