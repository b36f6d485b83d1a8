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
 * grant).
 *
 * Both hold only if a change on the way to a deny is reported at all. A plain root is watched
 * from its parent, not inside, so an agent writing in it could put a link in place of a denied
 * directory's ancestor unseen, and every recompute after would take the old rule over (it named
 * where the directory was, not where the link now leads). `watchDirs` names every directory on
 * the way to a rule that lies inside a root, for the resolution's watch plan: the change is then
 * reported like any other in a watched directory (a link or a removal makes a full recompute).
 * A change outside every root is no agent's; a rescan catches it.
 */
import type { DenyAccess } from '../common/types.js';
import { compileDeny, type DenyRule } from './deny.js';
import { isGlob, splitGlob } from './expand.js';
import { pathCalls } from './fs.js';
import type { FsView, WatchPlan } from './model.js';
import { isInsideOrEqual, selfAndAncestors } from './paths.js';

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
  /** Every rule this resolution uses, with the path it was compiled from. */
  private readonly used: { abs: string; rule: DenyRule }[] = [];
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
    this.used.push({ abs, rule });
    return rule;
  };

  /**
   * The directories to watch (their own entries) so that a change on the way to a rule is seen:
   * every existing directory, not a link, strictly above the path as written, its canonical form
   * or a glob's base, and at or below one of `roots` (canonical). Those inside `trees` (watched
   * whole already) are left out. `roots` is gone through once, looking each up in a set.
   */
  async watchDirs(
    fs: FsView,
    roots: Iterable<string>,
    trees: string[],
  ): Promise<WatchPlan['dirs']> {
    /** Each rule's ends (as written, canonical, a glob's base) and every directory above them. */
    const chains: string[][] = [];
    const above = new Set<string>();
    for (const { abs, rule } of this.used) {
      if (abs.startsWith('**/')) continue;
      for (const end of [isGlob(abs) ? splitGlob(abs).base : abs, rule.literal, rule.base]) {
        if (end === undefined) continue;
        const chain = selfAndAncestors(end).slice(1);
        chains.push(chain);
        for (const dir of chain) above.add(dir);
      }
    }
    // Only a root above some rule matters.
    const holding = new Set<string>();
    for (const root of roots) if (above.has(root)) holding.add(root);
    if (holding.size === 0) return [];
    const wanted = new Set<string>();
    for (const chain of chains) {
      // Nearest first: once a directory is in no root, neither is any above it.
      for (const dir of chain) {
        if (!selfAndAncestors(dir).some((a) => holding.has(a))) break;
        if (!trees.some((t) => isInsideOrEqual(dir, t))) wanted.add(dir);
      }
    }
    const calls = pathCalls(fs);
    const dirs: WatchPlan['dirs'] = [];
    for (const path of wanted) {
      // A missing directory is seen appearing from the one above it; a link is not watched
      // (a watch follows it), its replacement is seen from the directory holding it.
      const st = await calls.lstat(path).catch(() => undefined);
      if (st?.isDirectory()) dirs.push({ path, depth: 0 });
    }
    return dirs;
  }

  /** Let the next resolution after `resolution` take these rules. */
  keep(resolution: object): void {
    carried.set(resolution, this.now);
  }
}
