/** From parsed policy files to each server's roots and access decisions (docs/policy.md "Meaning"). */
import { isAbsolute } from 'node:path';
import { errnoCode } from '../common/errors.js';
import type {
  AskRule,
  CheckResult,
  ExplainResult,
  ExplainRule,
  PolicyError,
  RefusalKind,
  Root,
  ToolRule,
} from '../common/types.js';
import { CommonEffects, denyMeta, holeIn, type Effect } from './common-effect.js';
import { compileDeny, covers, describeRule, type DenyRule } from './deny.js';
import { mayHoldEntries, linkItself, positionDependent } from './descendants.js';
import { anchorOf, type Anchor, type LinkPins } from './anchor.js';
import {
  applyExpansion,
  dedupeDirs,
  expandEntry,
  type EntryResult,
  type Expansion,
} from './entry.js';
import { updateEntry } from './entry-update.js';
import { isGlob } from './expand.js';
import { limitFs, memoFs } from './fs.js';
import { launchRules } from './launch-rules.js';
import type {
  DenyEntry,
  ParsedPolicyFile,
  PolicyContext,
  Pos,
  ResolvedPolicy,
  RootEntry,
  ServerBlock,
  WatchPlan,
} from './model.js';
import {
  canonicalizeLoose,
  compareUtf8,
  isInsideOrEqual,
  isStrictlyInside,
  listedPath,
  normalizeLexically,
  toUri,
} from './paths.js';
import { protectedRules } from './protected.js';
import { compileServerPattern, hasWildcard, unescapeStars } from './server-pattern.js';
import { includeWatchDir } from './watch-targets.js';

interface Block {
  block: ServerBlock;
  file: ParsedPolicyFile;
  matches: (name: string) => boolean;
  entries: EntryResult[];
  denies: DenyRule[];
}

/** A root as the access decision sees it. */
interface RootInfo {
  canonical: string;
  readOnly: boolean;
  root: Root;
  /** The entry a decision names: one that makes the root writable, if any does. */
  rule: RootEntry;
}

/** What one set of matching blocks resolves to (shared by every name that matches that set). */
interface ServerView {
  roots: Root[];
  info: RootInfo[];
  denies: DenyRule[];
  /** Why each entry's matches were dropped, keyed by canonical path. */
  dropped: Map<string, DenyRule>;
  nextExpiry: number | undefined;
}

export interface ResolveOptions {
  /** Absolute include patterns (protected, and watched). */
  includePatterns?: string[];
  /** Extra policy files to protect and watch even if not loaded (the grants file, a missing main file). */
  extraPolicyFiles?: string[];
  /**
   * Where each written root and glob base led when it entered the policy (the daemon keeps
   * these across resolutions). Without pins every resolution follows links as they are now.
   */
  pins?: LinkPins;
  /**
   * The resolution of the same files just before, and the paths that changed on disk since
   * (as the watcher reports them): what those paths cannot affect is taken from `previous`,
   * and a glob walks only the changed subtrees again. Both or neither.
   */
  previous?: ResolvedPolicy;
  changed?: string[];
}

/** Resolve parsed policy files (in file order, grants last) at `ctx.now`. */
export async function resolvePolicy(
  files: ParsedPolicyFile[],
  ctx: PolicyContext,
  options: ResolveOptions = {},
): Promise<ResolvedPolicy> {
  const fs = memoFs(limitFs(ctx.fs));
  const warnings: PolicyError[] = [];
  const warn = (pos: Pos, message: string) =>
    warnings.push({ file: pos.file, line: pos.line, column: pos.column, message });
  const plan: WatchPlan = {
    policyFiles: [...new Set([...files.map((f) => f.file), ...(options.extraPolicyFiles ?? [])])],
    includeDirs: [],
    dirs: [],
    recursive: [],
  };
  const policyFiles = files.map((f) => f.file);
  const includePatterns = options.includePatterns ?? [];
  for (const pattern of includePatterns) {
    if (isGlob(pattern)) plan.includeDirs.push(await includeWatchDir(fs, pattern));
    else plan.policyFiles.push(pattern);
  }
  const protectedList = await protectedRules(fs, {
    home: ctx.home,
    policyFiles: [...new Set([...policyFiles, ...(options.extraPolicyFiles ?? [])])],
    includePatterns,
    stateDir: ctx.stateDir,
    runtimeDir: ctx.runtimeDir,
    installDir: ctx.installDir,
    configHome: ctx.env.XDG_CONFIG_HOME?.startsWith('/') ? ctx.env.XDG_CONFIG_HOME : undefined,
  });

  /** A policy's deny entries (already expanded by the loader) as rules. */
  const compileDenies = (entries: DenyEntry[]): Promise<DenyRule[]> =>
    Promise.all(
      entries
        .filter((d) => d.abs !== undefined)
        .map((d) =>
          compileDeny(fs, d.abs!, d.access, {
            source: 'deny',
            display: d.path,
            pos: d.pos,
            inMeta: true,
          }),
        ),
    );
  const globalDenies = await compileDenies(files.flatMap((f) => f.deny));

  const canonicalHome = await canonicalizeLoose(fs, ctx.home).catch(() => ctx.home);
  const anchors = new Map<string, Promise<Anchor>>();
  const anchor = (written: string): Promise<Anchor> => {
    let a = anchors.get(written);
    if (!a) {
      a = anchorOf(fs, written, { home: ctx.home, canonicalHome, pins: options.pins });
      anchors.set(written, a);
    }
    return a;
  };

  let nextExpiry: number | undefined;
  const blocks: Block[] = [];
  // Many entries name the same path or glob: expand each (path, kind) once per resolution.
  const expansions = new Map<string, Promise<Expansion>>();
  const changed = options.changed;
  const earlier =
    changed !== undefined && options.previous instanceof Resolution
      ? options.previous.expansions
      : undefined;
  const pending: Promise<void>[] = [];
  for (const file of files) {
    for (const block of file.servers) {
      const denies = await compileDenies(block.deny);
      const entries: EntryResult[] = [];
      for (const entry of block.roots) {
        const readOnly = entry.readOnly ?? block.readOnly ?? file.defaults.readOnly;
        const expired = entry.expires !== undefined && entry.expires <= ctx.now;
        if (entry.expires !== undefined && !expired) {
          nextExpiry =
            nextExpiry === undefined ? entry.expires : Math.min(nextExpiry, entry.expires);
        }
        const result: EntryResult = { entry, readOnly, expired, matches: [] };
        entries.push(result);
        const abs = entry.abs;
        if (abs === undefined) continue;
        if (expired) {
          result.reason = 'expired';
          warn(
            entry.pos,
            `${entry.path}: expired at ${new Date(entry.expires!).toISOString()}; it grants nothing`,
          );
          continue;
        }
        const key = `${entry.kind ?? 'directory'}\0${abs}`;
        let expansion = expansions.get(key);
        if (!expansion) {
          const kind = entry.kind ?? 'directory';
          expansion = earlier
            ? updateEntry(fs, abs, kind, anchor, earlier.get(key), changed!)
            : expandEntry(fs, abs, kind, anchor);
          expansions.set(key, expansion);
        }
        pending.push(expansion.then((x) => applyExpansion(x, entry, result, warn)));
      }
      blocks.push({ block, file, matches: compileServerPattern(block.pattern), entries, denies });
    }
  }
  await Promise.all(pending);
  const expanded = new Map<string, Expansion>();
  for (const [key, x] of expansions) expanded.set(key, await x);
  for (const x of expanded.values()) {
    if (x.watch.dir) plan.dirs.push(x.watch.dir);
    if (x.watch.recursive) plan.recursive.push(x.watch.recursive);
  }
  plan.dirs = dedupeDirs(plan.dirs);
  options.pins?.sweep();
  return new Resolution({
    ctx,
    parsed: files,
    warnings,
    nextExpiry,
    watchPlan: plan,
    blocks,
    globalDenies,
    protectedList,
    expansions: expanded,
    previous: options.previous instanceof Resolution ? options.previous : undefined,
  });
}

/** What a resolution is made of. */
interface ResolutionParts {
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

/** The denies every server shares, as text: equal text, equal effect on every path. */
function denySignature(rules: DenyRule[]): string {
  return rules
    .map((d) =>
      [d.source, d.access, d.display, d.literal, d.pattern, d.base, d.entriesOnly, d.inMeta].join(
        '\0',
      ),
    )
    .join('\n');
}

/** Past this many remembered paths, a resolution starts its caches afresh (deleted paths go). */
const SHARED_CACHE_MAX = 400_000;

class Resolution implements ResolvedPolicy {
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
    this.common = [...this.globalDenies, ...this.protectedList];
    this.denySignature = denySignature(this.common);
    // The common denies' effect on a path and the root objects built from it depend on nothing
    // else: a recompute with the same denies shares them, so a 30,000-root list is not rebuilt.
    const before = parts.previous;
    if (
      before !== undefined &&
      before.denySignature === this.denySignature &&
      before.effects.size + before.rootObjects.size < SHARED_CACHE_MAX
    ) {
      this.effects = before.effects;
      this.rootObjects = before.rootObjects;
      this.commonEffects = before.commonEffects;
    } else {
      this.effects = new Map();
      this.rootObjects = new Map();
      this.commonEffects = new CommonEffects(this.common);
    }
  }

  private readonly denySignature: string;
  /** The denies every server shares: the policy's global ones, then the protected paths. */
  private readonly common: DenyRule[];

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

  launch(server: string): Pick<ExplainResult, 'launch' | 'sandbox'> {
    return launchRules(this.matching(server), this.ctx);
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

  private viewKey(blocks: Block[]): string {
    return blocks.map((b) => this.order.get(b)).join(',');
  }

  /** Names that match the same blocks share one view, so invented names cannot grow memory. */
  private view(server: string): ServerView {
    const blocks = this.matching(server);
    const key = this.viewKey(blocks);
    let v = this.views.get(key);
    if (!v) {
      v = this.computeView(blocks);
      this.views.set(key, v);
    }
    return v;
  }

  /** Root objects by canonical path, one per name, access and expiry seen there. */
  private readonly rootObjects: Map<string, SharedRoot[]>;
  /** Per canonical path; `kill` is the index of the dropping rule among the common ones. */
  private readonly effects: Map<string, Effect>;
  private readonly commonEffects: CommonEffects;

  /** What the global denies and protected paths do to a root at this canonical path. */
  private commonEffect(canonical: string): Effect {
    let e = this.effects.get(canonical);
    if (!e) {
      e = this.commonEffects.effect(canonical);
      this.effects.set(canonical, e);
    }
    // A shared cache holds the index: the rule objects are this resolution's own.
    return e;
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
      const steps = this.viewSteps(blocks);
      let step = steps.next();
      while (!step.done) {
        await new Promise((resolve) => setImmediate(resolve));
        step = steps.next();
      }
      if (!this.views.has(key)) this.views.set(key, step.value);
    }
  }

  private computeView(blocks: Block[]): ServerView {
    const steps = this.viewSteps(blocks);
    let step = steps.next();
    while (!step.done) step = steps.next();
    return step.value;
  }

  /** A view, built in steps: each `yield` is a place to let the event loop turn. */
  private *viewSteps(blocks: Block[]): Generator<void, ServerView> {
    const denies = [
      ...this.globalDenies,
      ...blocks.flatMap((b) => b.denies),
      ...this.protectedList,
    ];
    interface Agg {
      name: string;
      rule: RootEntry;
      writable: boolean;
      expires: number | undefined;
      forever: boolean;
      /** The entry that named it first. */
      from: EntryResult;
    }
    const agg = new Map<string, Agg>();
    let nextExpiry: number | undefined;
    let done = 0;
    for (const b of blocks) {
      for (const e of b.entries) {
        if (e.expired) continue;
        const exp = e.entry.expires;
        if (exp !== undefined && e.matches.length > 0) {
          nextExpiry = nextExpiry === undefined ? exp : Math.min(nextExpiry, exp);
        }
        for (const m of e.matches) {
          if (++done % VIEW_SLICE === 0) yield;
          // Keyed by the path the root's URI names: the list and the decision are one computation.
          const canonical = listedPath(m.canonical);
          const a = agg.get(canonical);
          if (!a) {
            agg.set(canonical, {
              name: m.name,
              rule: e.entry,
              writable: !e.readOnly,
              expires: exp,
              forever: exp === undefined,
              from: e,
            });
          } else {
            if (!a.writable && !e.readOnly) a.rule = e.entry;
            // One entry reaching a path twice (a link and its target): the smaller name, so
            // that the name does not depend on the order the walk met them.
            if (a.from === e && compareUtf8(m.name, a.name) < 0) a.name = m.name;
            a.writable ||= !e.readOnly;
            a.forever ||= exp === undefined;
            if (exp !== undefined)
              a.expires = a.expires === undefined ? exp : Math.max(a.expires, exp);
          }
        }
      }
    }
    const dropped = new Map<string, DenyRule>();
    const info: RootInfo[] = [];
    const own = blocks.flatMap((b) => b.denies);
    for (const [canonical, a] of agg) {
      if (++done % VIEW_SLICE === 0) yield;
      // The denies every server shares are evaluated once per path; a block's own denies per view.
      const common = this.commonEffect(canonical);
      const killer =
        (common.kill === undefined ? undefined : this.common[common.kill]) ??
        own.find((d) => d.access === 'all' && covers(d, canonical));
      if (killer) {
        dropped.set(canonical, killer);
        continue;
      }
      const readOnly =
        !a.writable ||
        common.write ||
        own.some((d) => d.access === 'write' && covers(d, canonical));
      const expires = !a.forever && a.expires !== undefined ? a.expires : undefined;
      // Views share identical roots: a thousand servers over one tree hold one object per root.
      const shared = own.length === 0 ? (this.rootObjects.get(canonical) ?? []) : undefined;
      let root = shared?.find(
        (r) => r.name === a.name && r.readOnly === readOnly && r.expires === expires,
      )?.root;
      if (!root) {
        const meta: Root['_meta'] = { 'mcp-roots/readOnly': readOnly };
        if (expires !== undefined) meta['mcp-roots/expiresAt'] = new Date(expires).toISOString();
        const holes =
          own.length === 0
            ? common.meta
            : denyMeta([...this.globalDenies, ...own, ...this.protectedList], canonical);
        if (holes.length > 0) meta['mcp-roots/deny'] = holes;
        root = { uri: toUri(canonical), name: a.name, _meta: meta };
        if (shared !== undefined) {
          if (shared.length === 0) this.rootObjects.set(canonical, shared);
          shared.push({ name: a.name, readOnly, expires, root });
        }
      }
      info.push({ canonical, readOnly, root, rule: a.rule });
    }
    yield;
    sortByCanonical(info);
    return { roots: info.map((i) => i.root), info, denies, dropped, nextExpiry };
  }

  async check(server: string, path: string, access: 'read' | 'write'): Promise<CheckResult> {
    const no = (reason: string): CheckResult => ({
      allowed: false,
      access,
      reason,
      refusal: 'invalid',
    });
    if (path.includes('\0')) return no('the path contains a NUL byte');
    if (!isAbsolute(path)) return no(`${path} is not an absolute path; give the full path`);
    const view = this.view(server);
    let canonical: string;
    try {
      canonical = await canonicalizeLoose(this.ctx.fs, normalizeLexically(path));
    } catch (err) {
      return no(`cannot resolve ${path} (${errnoCode(err) ?? String(err)})`);
    }
    const holds = access === 'write' && (await mayHoldEntries(this.ctx.fs, canonical));
    const first = this.decide(view, server, path, canonical, access, holds);
    if (!first.allowed) return first;
    if (access === 'write') {
      // A rename replaces a symlink itself, not its target: judge where the link stands too.
      const self = await linkItself(this.ctx.fs, normalizeLexically(path));
      if (self !== undefined && self !== canonical) {
        const result = this.decide(view, server, self, self, access, false);
        if (!result.allowed)
          return { ...result, reason: `${path} is a symlink, and replacing it: ${result.reason}` };
      }
    }
    if (!/[^\p{ASCII}]/u.test(path)) return first;
    // A server may open a Unicode-equivalent name for one that does not exist (the filesystem
    // server does, NFC for NFD): every spelling must be allowed.
    for (const form of ['NFC', 'NFD'] as const) {
      const other = await canonicalizeLoose(
        this.ctx.fs,
        normalizeLexically(path.normalize(form)),
      ).catch(() => canonical);
      if (other === canonical) continue;
      const otherHolds = access === 'write' && (await mayHoldEntries(this.ctx.fs, other));
      const result = this.decide(view, server, other, other, access, otherHolds);
      if (!result.allowed)
        return { ...result, reason: `${path} may open its ${form} spelling: ${result.reason}` };
    }
    return first;
  }

  private decide(
    view: ServerView,
    server: string,
    path: string,
    canonical: string,
    access: 'read' | 'write',
    /** The path is a directory or missing: a write of it may move a whole tree (a rename). */
    holds: boolean,
  ): CheckResult {
    const no = (reason: string, root?: Root, refusal: RefusalKind = 'denied'): CheckResult =>
      root
        ? { allowed: false, access, reason, refusal, root }
        : { allowed: false, access, reason, refusal };
    let best: RootInfo | undefined;
    for (const r of view.info) {
      if (
        isInsideOrEqual(canonical, r.canonical) &&
        (!best || r.canonical.length > best.canonical.length)
      )
        best = r;
    }
    const shown = canonical === path ? path : `${path} (${canonical})`;
    if (!best) {
      // A path no root holds may still be one a deny covers: that refusal is a deny, never
      // something a person is asked to lift (a grant would not lift it either).
      const deny = view.denies.find(
        (d) =>
          ((d.access === 'all' || access === 'write') && covers(d, canonical)) ||
          (access === 'write' && holds && positionDependent(d, canonical)),
      );
      if (deny !== undefined)
        return no(
          `${shown} is outside every root of ${server}, and denied by ${describeRule(deny)}`,
        );
      return no(`${shown} is outside every root of ${server}`, undefined, 'outside');
    }
    for (const d of view.denies) {
      if (d.access === 'all' && covers(d, canonical))
        return no(`${shown} is denied by ${describeRule(d)}`, best.root);
    }
    if (access === 'write') {
      for (const d of view.denies) {
        if (covers(d, canonical))
          return no(`writing ${shown} is denied by ${describeRule(d)}`, best.root);
        if (holds && positionDependent(d, canonical)) {
          return no(
            `writing ${shown} as a whole (moving, renaming or replacing it) could carry what ${describeRule(d)} covers inside it, in or out`,
            best.root,
          );
        }
      }
      const nested = holds
        ? view.info.find((r) => r.readOnly && isStrictlyInside(r.canonical, canonical))
        : undefined;
      if (nested) {
        return no(
          `writing ${shown} as a whole (moving, renaming or replacing it) would move the read-only root ${nested.root.uri} inside it`,
          best.root,
        );
      }
      if (best.readOnly)
        return no(
          `${shown} is in the read-only root ${best.root.uri}, from ${describeRoot(best.rule)}`,
          best.root,
          'read-only',
        );
    }
    return {
      allowed: true,
      access,
      reason: `${shown} is inside the root ${best.root.uri}, from ${describeRoot(best.rule)}`,
      root: best.root,
    };
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
    const blocks = this.matching(server);
    const view = this.view(server);
    const listed = new Set(view.info.map((i) => i.canonical));
    const rules: ExplainRule[] = [];
    for (const b of blocks) {
      for (const e of b.entries) {
        const yielded = e.matches
          .filter((m) => listed.has(listedPath(m.canonical)))
          .map((m) => toUri(listedPath(m.canonical)));
        const rule: ExplainRule = {
          ...posOf(e.entry.pos),
          kind: 'root',
          path: e.entry.path,
          yielded,
        };
        if (yielded.length === 0) {
          const reason =
            e.reason ??
            (e.matches.some((m) => view.dropped.has(listedPath(m.canonical)))
              ? 'denied'
              : e.expired
                ? 'expired'
                : 'missing');
          rule.reason = reason;
        }
        rules.push(rule);
      }
    }
    for (const d of view.denies) {
      const affected = [...view.dropped].filter(([, k]) => k === d).map(([c]) => toUri(c));
      for (const i of view.info) {
        if (covers(d, i.canonical) || (d.inMeta && !d.entriesOnly && holeIn(d, i.canonical)))
          affected.push(i.root.uri);
      }
      if (d.source === 'protected' && affected.length === 0) continue;
      rules.push({
        ...(d.pos ? posOf(d.pos) : { file: '<built-in>', line: 0, column: 0 }),
        kind: d.source === 'protected' ? 'protected' : 'deny',
        path: d.display,
        yielded: affected,
      });
    }
    return { server, declared: blocks.length > 0, roots: view.roots, rules, ask: this.ask(server) };
  }

  /** The `ask:` of the last block naming the server that says one; never asking by default. */
  ask(server: string): AskRule {
    let rule: AskRule = { outside: false, write: false };
    for (const b of this.matching(server)) if (b.block.ask !== undefined) rule = b.block.ask;
    return rule;
  }
}

/** How a root entry is named in a reason: what was written, and where. */
function describeRoot(entry: RootEntry): string {
  const { file, line, column } = entry.pos;
  return `root ${entry.path} (${file}:${line}:${column})`;
}

function posOf(pos: Pos): { file: string; line: number; column: number } {
  return { file: pos.file, line: pos.line, column: pos.column };
}

/** How many matches a view takes in between two turns of the event loop. */
const VIEW_SLICE = 1024;

/** A root object kept for the next resolution, with what it was built from. */
interface SharedRoot {
  name: string;
  readOnly: boolean;
  expires: number | undefined;
  root: Root;
}

/** UTF-16 code units that order differently from the code points (UTF-8 bytes) they encode. */
const SURROGATE = /[\uD800-\uDFFF]/;

/**
 * Sort roots by canonical path in UTF-8 byte order. Without surrogates UTF-16 order is the
 * same, and the engine's own string sort (no comparator called per pair) is several times
 * faster on 100,000 paths.
 */
function sortByCanonical(info: RootInfo[]): void {
  if (info.some((i) => SURROGATE.test(i.canonical))) {
    info.sort((x, y) => compareUtf8(x.canonical, y.canonical));
    return;
  }
  const byPath = new Map(info.map((i) => [i.canonical, i]));
  const paths = [...byPath.keys()].sort();
  paths.forEach((p, n) => (info[n] = byPath.get(p)!));
}
