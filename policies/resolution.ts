/**
 * A resolved policy: the immutable snapshot `resolvePolicy` builds, and the synchronous queries
 * on it (a server's roots, tools, launch, `ask:`, explanation), plus the access check.
 */
import type {
  AskRule,
  CheckResult,
  ExplainResult,
  PolicyError,
  Root,
  ToolRule,
  Writer,
} from '../common/types.js';
import { checkAccess } from './check-access.js';
import { covers, describeRule, type DenyRule } from './deny.js';
import type { Expansion } from './entry.js';
import { explainServer } from './explain.js';
import { denyMeta } from './common-effect.js';
import { allIncludes } from './include-meta.js';
import { launchRules } from './launch-rules.js';
import type { ParsedPolicyFile, PolicyContext, ResolvedPolicy, WatchPlan } from './model.js';
import { compareUtf8 } from './paths.js';
import { hasWildcard, unescapeStars } from './server-pattern.js';
import {
  CommonEffects,
  computeView,
  viewSteps,
  type Block,
  type RootsChange,
  type ServerView,
} from './server-view.js';
import { runAtOnce, runSliced } from './slices.js';
import { updateViewSteps } from './view-update.js';

/** What a resolution is made of. */
export interface ResolutionParts {
  ctx: PolicyContext;
  parsed: ParsedPolicyFile[];
  warnings: PolicyError[];
  nextExpiry: number | undefined;
  watchPlan: WatchPlan;
  blocks: Block[];
  globalDenies: DenyRule[];
  protectedList: DenyRule[];
  /** What each (kind, path) expanded to, for the next resolution to bring up to date. */
  expansions: Map<string, Expansion>;
  /** The resolution before, whose per-path results this one may share (same denies). */
  previous: Resolution | undefined;
}

export class Resolution implements ResolvedPolicy {
  readonly files: string[];
  private readonly views = new Map<string, ServerView>();

  readonly warnings: PolicyError[];
  readonly nextExpiry: number | undefined;
  readonly watchPlan: WatchPlan;
  readonly expansions: Map<string, Expansion>;
  private readonly ctx: PolicyContext;
  private readonly blocks: Block[];
  private readonly globalDenies: DenyRule[];
  private readonly protectedList: DenyRule[];
  /** The denies every server shares, and what they do to each path (kept across resolutions). */
  private readonly common: CommonEffects;
  /**
   * The views and blocks of the resolution before, which views here are updated from
   * (view-update.ts). Only one resolution back: the one before lets go of its own.
   */
  private before: { views: Map<string, ServerView>; blocks: Block[] } | undefined;

  constructor(parts: ResolutionParts) {
    this.files = parts.parsed.map((f) => f.file);
    this.warnings = parts.warnings;
    this.nextExpiry = parts.nextExpiry;
    this.watchPlan = parts.watchPlan;
    this.expansions = parts.expansions;
    this.ctx = parts.ctx;
    this.blocks = parts.blocks;
    this.globalDenies = parts.globalDenies;
    this.protectedList = parts.protectedList;
    this.blocks.forEach((b, i) => this.order.set(b, i));
    this.common = new CommonEffects(
      [...this.globalDenies, ...this.protectedList],
      parts.previous?.common,
    );
    const previous = parts.previous;
    if (previous !== undefined) {
      previous.before = undefined;
      this.before = { views: previous.views, blocks: previous.blocks };
    }
  }

  serverNames(): string[] {
    const names = new Set<string>();
    for (const b of this.blocks)
      if (!hasWildcard(b.block.pattern)) names.add(unescapeStars(b.block.pattern));
    return [...names].sort(compareUtf8);
  }

  roots(server: string): Root[] {
    return this.view(server).roots;
  }

  nextExpiryOf(server: string): number | undefined {
    return this.view(server).nextExpiry;
  }

  tools(server: string): Record<string, ToolRule> {
    const out: Record<string, ToolRule> = {};
    for (const b of this.matching(server)) {
      for (const [tool, rule] of Object.entries(b.block.tools))
        out[tool] = { ...out[tool], ...rule };
    }
    return out;
  }

  launch(server: string): Pick<ExplainResult, 'launch' | 'sandbox' | 'deny'> {
    const out = launchRules(this.matching(server), this.ctx);
    // An extra writable path is writable as a root is: the sandbox must keep the include patterns
    // from matching there too (docs/security.md, "Include patterns in a writable root").
    if (out.sandbox !== undefined && out.sandbox.write.length > 0) {
      const include = allIncludes(this.protectedList);
      if (include.length > 0) out.sandbox.include = include;
    }
    // And the denies and protected paths, which the proxy matches in each canonical `read` and
    // `write` path, and in the program's own directories (sandboxed by the policy or by the
    // proxy's --sandbox alone): what is denied is hidden there as in a root.
    const deny = denyMeta(this.view(server).denies, '/');
    if (deny.length === 0) return out;
    if (out.sandbox !== undefined && out.sandbox.read.length + out.sandbox.write.length > 0)
      out.sandbox.deny = deny;
    return { ...out, deny };
  }

  private byName: Map<string, Block[]> | undefined;
  private wildcards: Block[] = [];

  /** Blocks whose pattern matches the name, in file order (literal names by index). */
  private matching(server: string): Block[] {
    if (!this.byName) {
      this.byName = new Map();
      for (const b of this.blocks) {
        if (hasWildcard(b.block.pattern)) this.wildcards.push(b);
        else {
          const name = unescapeStars(b.block.pattern);
          this.byName.set(name, [...(this.byName.get(name) ?? []), b]);
        }
      }
    }
    const literal = this.byName.get(server) ?? [];
    if (this.wildcards.length === 0) return literal;
    const wild = this.wildcards.filter((b) => b.matches(server));
    if (wild.length === 0) return literal;
    return [...literal, ...wild].sort((x, y) => this.order.get(x)! - this.order.get(y)!);
  }

  private readonly order = new Map<Block, number>();

  /**
   * What every block that names, or may match, a server other than `server` lets it write: its
   * writable roots and its `sandbox.write` paths. A block of `server`'s own name is left out (what
   * a server may write itself, it can change for itself only); a pattern's block is counted, as
   * it matches other names too. Denies are not taken off: a write-deny stops a checked tool call,
   * not the server's own process, so the whole root counts.
   */
  writers(server: string): Writer[] {
    this.everyWriter ??= this.blocks.flatMap((b) => this.writersOf(b));
    return this.everyWriter
      .filter((w) => !w.exact || w.by !== server)
      .map(({ exact: _exact, ...w }) => w);
  }

  /** Every block's writers, built once per resolution (a sandboxed server's push compares them). */
  private everyWriter: (Writer & { exact: boolean })[] | undefined;

  private writersOf(b: Block): (Writer & { exact: boolean })[] {
    const pattern = b.block.pattern;
    const exact = !hasWildcard(pattern);
    const where = {
      by: exact ? unescapeStars(pattern) : pattern,
      exact,
      file: b.block.pos.file,
      line: b.block.pos.line,
    };
    const paths = new Set<string>();
    for (const info of this.viewOf([b]).info) if (!info.readOnly) paths.add(info.canonical);
    for (const path of launchRules([b], this.ctx).sandbox?.write ?? []) paths.add(path);
    return [...paths].map((path) => ({ path, ...where }));
  }

  /** Names that match the same blocks share one view, so invented names cannot grow memory. */
  private view(server: string): ServerView {
    return this.viewOf(this.matching(server));
  }

  /** The view of these blocks (in file order), built once per resolution. */
  private viewOf(blocks: Block[]): ServerView {
    const key = this.viewKey(blocks);
    let v = this.views.get(key);
    if (!v) {
      v = this.updated(key, blocks) ?? computeView(blocks, this.viewDenies());
      this.views.set(key, v);
    }
    return v;
  }

  /** The view the resolution before had for these blocks, brought up to date, if it can be. */
  private updated(key: string, blocks: Block[]): ServerView | undefined {
    return runAtOnce(this.updatedSteps(key, blocks));
  }

  /** `updated` as steps (view-update.ts), for `prepare` to run a slice at a time. */
  private *updatedSteps(key: string, blocks: Block[]): Generator<void, ServerView | undefined> {
    const before = this.before?.views.get(key);
    if (before === undefined) return undefined;
    const earlier = blocks.map((b) => this.before!.blocks[this.order.get(b)!]);
    if (earlier.some((b) => b === undefined)) return undefined;
    return yield* updateViewSteps(before, earlier as Block[], blocks, this.viewDenies());
  }

  /** How the server's list differs from the one before, when the view was updated by a delta. */
  rootsChange(server: string): RootsChange | undefined {
    return this.view(server).change;
  }

  /**
   * Build the views of these servers now, a slice at a time with the event loop turning
   * between slices: a view of 30,000 roots built in one go holds every other server's answers.
   */
  async prepare(servers: Iterable<string>): Promise<void> {
    for (const server of servers) {
      const blocks = this.matching(server);
      const key = this.viewKey(blocks);
      if (this.views.has(key)) continue;
      const updated = await runSliced(this.updatedSteps(key, blocks));
      // A synchronous query between slices may have built it meanwhile.
      if (this.views.has(key)) continue;
      if (updated !== undefined) {
        this.views.set(key, updated);
        continue;
      }
      const view = await runSliced(viewSteps(blocks, this.viewDenies()));
      if (!this.views.has(key)) this.views.set(key, view);
    }
    // What the diff compares is built; the resolution before may go.
    this.before = undefined;
  }

  private viewKey(blocks: Block[]): string {
    return blocks.map((b) => this.order.get(b)).join(',');
  }

  private viewDenies() {
    return {
      globalDenies: this.globalDenies,
      protectedList: this.protectedList,
      common: this.common,
    };
  }

  check(server: string, path: string, access: 'read' | 'write'): Promise<CheckResult> {
    return checkAccess(this.ctx.fs, this.view(server), server, path, access);
  }

  denyFor(
    server: string,
    canonical: string,
  ): { access: 'all' | 'write'; reason: string } | undefined {
    const denies = this.view(server).denies.filter((d) => !d.entriesOnly && covers(d, canonical));
    const rule = denies.find((d) => d.access === 'all') ?? denies[0];
    return rule ? { access: rule.access, reason: describeRule(rule) } : undefined;
  }

  explain(server: string): ExplainResult {
    return explainServer(server, this.matching(server), this.view(server), this.ask(server));
  }

  /** The `ask:` of the last block naming the server that says one; never asking by default. */
  ask(server: string): AskRule {
    let rule: AskRule = { outside: false, write: false };
    for (const b of this.matching(server)) if (b.block.ask !== undefined) rule = b.block.ask;
    return rule;
  }
}
