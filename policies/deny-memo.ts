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
import { compileDeny, throughLoop, type DenyRule } from './deny.js';
import { isGlob, splitGlob } from './expand.js';
import { pathProbe } from './fs.js';
import type { FsView, WatchPlan } from './model.js';
import { isInsideOrEqual, selfAndAncestors } from './paths.js';

/** What `compileDeny` takes besides the view. */
export type DenyExtra = Pick<
  DenyRule,
  'source' | 'display' | 'pos' | 'entriesOnly' | 'inMeta' | 'include'
>;

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
  return [
    abs,
    access,
    extra.source,
    extra.display,
    extra.entriesOnly,
    extra.inMeta,
    extra.include,
    pos,
  ].join('\0');
}

/** True when the rule's canonical form cannot differ from what `changed` leaves it. */
function stillHolds(rule: DenyRule, abs: string, changed: string[]): boolean {
  if (abs.startsWith('**/')) return true;
  // The loop may be gone by now, and the link fixing it lies above the path, not in `changed`.
  if (rule.literal !== abs || throughLoop(rule)) return false;
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
  /** What `watchDirs` found in the resolution before (any resolution of the same files). */
  private readonly previousWatch: WatchCarry | undefined;
  private watch: WatchCarry | undefined;

  constructor(
    previous: object | undefined,
    private readonly changed: string[] | undefined,
  ) {
    this.before = previous && changed ? carried.get(previous) : undefined;
    this.previousWatch = previous ? carriedWatch.get(previous) : undefined;
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
   * or a glob's base, and at or below one of the roots (canonical). Those inside `trees` (watched
   * whole already) are left out.
   *
   * What the resolution before found is carried over (`WatchCarry`): with the same rules, a
   * source it saw (the same expansion, or one that says what it added and removed since) is not
   * gone through again, and a directory whose `lstat` it made is asked again only when a changed
   * path is at or above it (a full resolution asks all again). So a recompute after one new
   * directory looks at that directory, not at 100,000 roots and every directory of every chain.
   */
  async watchDirs(fs: FsView, sources: RootSource[], trees: string[]): Promise<WatchPlan['dirs']> {
    const ends = this.ends();
    const endsKey = ends.join('\0');
    const prior = this.previousWatch?.endsKey === endsKey ? this.previousWatch : undefined;
    const { chains, above } = prior ?? chainsOf(ends);
    const holdingOf = new Map<object, string[]>();
    const holding = new Set<string>();
    for (const source of sources) {
      const list = heldBy(source, above, prior?.holdingOf);
      holdingOf.set(source.key, list);
      for (const root of list) holding.add(root);
    }
    const treesKey = trees.join('\0');
    const wanted =
      prior !== undefined && prior.treesKey === treesKey && sameSet(prior.holding, holding)
        ? prior.wanted
        : wantedDirs(chains, holding, trees);
    const probe = pathProbe(fs);
    const isDir = new Map<string, boolean>();
    const dirs: WatchPlan['dirs'] = [];
    for (const path of wanted) {
      let known = prior?.isDir.get(path);
      if (
        known === undefined ||
        this.changed === undefined ||
        this.changed.some((c) => isInsideOrEqual(path, c))
      ) {
        // A missing directory is seen appearing from the one above it; a link is not watched
        // (a watch follows it), its replacement is seen from the directory holding it.
        let st;
        try {
          st = await probe.lstat(path);
        } catch {
          st = undefined; // unreadable: not watched, as a missing one
        }
        known = st?.isDirectory() ?? false;
      }
      isDir.set(path, known);
      if (known) dirs.push({ path, depth: 0 });
    }
    this.watch = { endsKey, chains, above, holdingOf, holding, treesKey, wanted, isDir };
    return dirs;
  }

  /** Each rule's ends (as written, canonical, a glob's base), in the order they were used. */
  private ends(): string[] {
    const out: string[] = [];
    for (const { abs, rule } of this.used) {
      if (abs.startsWith('**/')) continue;
      for (const end of [isGlob(abs) ? splitGlob(abs).base : abs, rule.literal, rule.base])
        if (end !== undefined) out.push(end);
    }
    return out;
  }

  /** Let the next resolution after `resolution` take these rules and what `watchDirs` found. */
  keep(resolution: object): void {
    carried.set(resolution, this.now);
    if (this.watch !== undefined) carriedWatch.set(resolution, this.watch);
  }
}

/**
 * Where a resolution's roots come from, for `watchDirs`: one per expansion. `key` is the same
 * object while the expansion is reused whole; an updated one names the one it came from, and
 * the roots it added and removed since.
 */
export interface RootSource {
  key: object;
  roots: () => Iterable<string>;
  delta?: { from: object; added: string[]; removed: string[] };
}

/** What `watchDirs` found, for the resolution after to start from. */
interface WatchCarry {
  /** The rules' ends: equal keys, equal `chains` and `above`. */
  endsKey: string;
  chains: string[][];
  above: Set<string>;
  /** Each source's roots that lie above some rule (a handful). */
  holdingOf: Map<object, string[]>;
  holding: Set<string>;
  treesKey: string;
  wanted: Set<string>;
  /** Each wanted directory's `lstat`: a directory (not a link), or not. */
  isDir: Map<string, boolean>;
}

const carriedWatch = new WeakMap<object, WatchCarry>();

/** Every directory strictly above each end, nearest first, and all of them as a set. */
function chainsOf(ends: string[]): { chains: string[][]; above: Set<string> } {
  const chains: string[][] = [];
  const above = new Set<string>();
  for (const end of ends) {
    const chain = selfAndAncestors(end).slice(1);
    chains.push(chain);
    for (const dir of chain) above.add(dir);
  }
  return { chains, above };
}

/** The roots of `source` that lie above some rule, from what the resolution before found if it can. */
function heldBy(
  source: RootSource,
  above: Set<string>,
  before: Map<object, string[]> | undefined,
): string[] {
  const same = before?.get(source.key);
  if (same !== undefined) return same;
  const d = source.delta;
  const from = d === undefined ? undefined : before?.get(d.from);
  if (d !== undefined && from !== undefined) {
    const removed = new Set(d.removed);
    const kept = removed.size === 0 ? [...from] : from.filter((r) => !removed.has(r));
    for (const r of d.added) if (above.has(r)) kept.push(r);
    return kept;
  }
  const out: string[] = [];
  for (const root of source.roots()) if (above.has(root)) out.push(root);
  return out;
}

/** The directories of each chain that are at or below a holding root and outside every tree. */
function wantedDirs(chains: string[][], holding: Set<string>, trees: string[]): Set<string> {
  const wanted = new Set<string>();
  if (holding.size === 0) return wanted;
  for (const chain of chains) {
    // Nearest first: once a directory is in no root, neither is any above it.
    for (const dir of chain) {
      if (!selfAndAncestors(dir).some((a) => holding.has(a))) break;
      if (!trees.some((t) => isInsideOrEqual(dir, t))) wanted.add(dir);
    }
  }
  return wanted;
}

function sameSet(a: Set<string>, b: Set<string>): boolean {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}
