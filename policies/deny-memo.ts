/**
 * Compiled denies carried from one resolution to the next. Every resolution compiles the 60-odd
 * protected paths and every deny of the policy, and compiling a path deny canonicalizes it (a
 * `realpath`, and an `lstat` per component when it does not exist): on this machine that was
 * most of a recompute after one new directory. A recompute that knows which paths changed
 * takes a rule from the resolution before it when the change cannot have moved it:
 *
 * - a `**\/NAME` rule never reads the filesystem;
 * - a path rule whose canonical form was the path as written (no link anywhere on it) stays so
 *   until one of its own ancestors (or the path) is created, removed or replaced, which is what
 *   a changed path at or above it reports.
 *
 * A rule that went through a link is compiled again every time (a change to any link on the
 * way could move it), and so is every rule on a full resolution (a rescan, a policy edit, a
 * grant), which is what catches a link made above a deny outside the watched directories.
 */
import type { DenyAccess } from '../common/types.js';
import { compileDeny, type DenyRule } from './deny.js';
import { isGlob, splitGlob } from './expand.js';
import type { FsView } from './model.js';
import { isInsideOrEqual } from './paths.js';

/** What `compileDeny` takes besides the view. */
export type DenyExtra = Pick<DenyRule, 'source' | 'display' | 'pos' | 'entriesOnly' | 'inMeta'>;

/** `compileDeny`, possibly answered from the resolution before. */
export type CompileDeny = (
  fs: FsView,
  abs: string,
  access: DenyAccess,
  extra: DenyExtra,
) => Promise<DenyRule>;

/** Each resolution's compiled rules by key, for the next resolution to take from. */
const carried = new WeakMap<object, Map<string, DenyRule>>();

function keyOf(abs: string, access: DenyAccess, extra: DenyExtra): string {
  const pos = extra.pos ? `${extra.pos.file}:${extra.pos.line}:${extra.pos.column}` : '';
  return [abs, access, extra.source, extra.display, extra.entriesOnly, extra.inMeta, pos].join(
    '\0',
  );
}

/** True when the rule's canonical form cannot differ from what `changed` leaves it. */
function stillHolds(rule: DenyRule, abs: string, changed: string[]): boolean {
  if (abs.startsWith('**/')) return true;
  if (rule.literal !== abs) return false;
  const fixed = isGlob(abs) ? splitGlob(abs).base : abs;
  if (isGlob(abs) && rule.base !== fixed) return false;
  return !changed.some((c) => isInsideOrEqual(abs, c) || isInsideOrEqual(fixed, c));
}

/** The compiler for one resolution; `keep` hands what it compiled to the next one. */
export class DenyMemo {
  private readonly now = new Map<string, DenyRule>();
  private readonly before: Map<string, DenyRule> | undefined;

  constructor(
    previous: object | undefined,
    private readonly changed: string[] | undefined,
  ) {
    this.before = previous && changed ? carried.get(previous) : undefined;
  }

  readonly compile: CompileDeny = async (fs, abs, access, extra) => {
    const key = keyOf(abs, access, extra);
    const old = this.before?.get(key);
    const rule =
      old && stillHolds(old, abs, this.changed!) ? old : await compileDeny(fs, abs, access, extra);
    this.now.set(key, rule);
    return rule;
  };

  /** Let the next resolution after `resolution` take these rules. */
  keep(resolution: object): void {
    carried.set(resolution, this.now);
  }
}
