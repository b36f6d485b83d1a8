/**
 * Where a path written in the policy (a plain root, or a glob's static base) leads, and
 * whether it may be followed there (docs/policy.md, "Symlinks"). Links on the written path are
 * followed as they are when the path enters the policy (the daemon starts, the policy is
 * reloaded on request, an edit or a grant adds the path); the target is pinned. A later
 * resolution (after a directory event, a rescan, an expiry) that finds the path leading
 * anywhere else, because a link appeared, was re-pointed, or replaced an ancestor, does not
 * follow it: the entry yields nothing until the person reloads. The daemon keeps the pins in
 * its state directory, so that a restart is not a moment at which a planted link is followed.
 */
import { errnoCode } from '../common/errors.js';
import type { FsView } from './model.js';
import { canonicalizeLoose, isInsideOrEqual, isStrictlyInside } from './paths.js';

/** Canonical targets of written paths, kept from one resolution to the next by the daemon. */
export class LinkPins {
  private readonly pins = new Map<string, string>();
  private used = new Set<string>();

  get(written: string): string | undefined {
    this.used.add(written);
    return this.pins.get(written);
  }

  set(written: string, canonical: string): void {
    this.used.add(written);
    this.pins.set(written, canonical);
  }

  /** Forget paths the last resolution did not ask about: they left the policy (or expired). */
  sweep(): void {
    for (const key of this.pins.keys()) if (!this.used.has(key)) this.pins.delete(key);
    this.used = new Set();
  }

  /** Forget everything: the next resolution follows links as they are now (a reload). */
  clear(): void {
    this.pins.clear();
    this.used = new Set();
  }

  get size(): number {
    return this.pins.size;
  }

  /** Every pin, sorted, to keep across restarts (daemon/pins-file.ts). */
  entries(): [written: string, canonical: string][] {
    return [...this.pins].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** Pins kept from before a restart, as if the last resolution had made them. */
  restore(entries: Iterable<[written: string, canonical: string]>): void {
    for (const [written, canonical] of entries) this.pins.set(written, canonical);
  }
}

export type Anchor =
  | { ok: true; canonical: string }
  | { ok: false; refused: true; note: string }
  | { ok: false; refused: false; code: string };

/**
 * Resolve `written` (absolute, lexically normal) for a root or glob base. `home` and
 * `canonicalHome` bound what a link may lead to: never `/`, the home, or an ancestor of it,
 * unless the person wrote that very path; and never an ancestor of the written path itself
 * (a cloned repository's `packages -> ..` must not turn `app/packages/*` into `app/*`).
 */
export async function anchorOf(
  fs: FsView,
  written: string,
  ctx: { home: string; canonicalHome: string; pins: LinkPins | undefined },
): Promise<Anchor> {
  let canonical: string;
  try {
    canonical = await canonicalizeLoose(fs, written);
  } catch (err) {
    return { ok: false, refused: false, code: errnoCode(err) ?? String(err) };
  }
  const pinned = ctx.pins?.get(written);
  if (pinned === undefined) ctx.pins?.set(written, canonical);
  else if (pinned !== canonical) {
    return {
      ok: false,
      refused: true,
      note: `${written} now leads to ${canonical}, not ${pinned} as when the policy was loaded (a symlink appeared or changed on the path); not followed: run \`rootsctl reload\` if you made that change`,
    };
  }
  const wroteTop = written === '/' || isInsideOrEqual(ctx.home, written);
  const leadsTop =
    canonical === '/' ||
    isInsideOrEqual(ctx.canonicalHome, canonical) ||
    isInsideOrEqual(ctx.home, canonical);
  if (!wroteTop && leadsTop) {
    return {
      ok: false,
      refused: true,
      note: `${written} leads through a symlink to ${canonical}; a link never yields \`/\`, the home directory or an ancestor of it; write that path itself if you mean it`,
    };
  }
  if (isStrictlyInside(written, canonical)) {
    return {
      ok: false,
      refused: true,
      note: `${written} leads through a symlink up to ${canonical}, which holds it; a link never yields an ancestor of the path written`,
    };
  }
  return { ok: true, canonical };
}
