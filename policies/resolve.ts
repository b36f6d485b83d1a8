/**
 * From parsed policy files to a `Resolution` (docs/policy.md "Meaning"): the asynchronous part,
 * which reads the filesystem once per resolution (expanding paths and globs, the protected paths,
 * the watch plan). The queries on the result are synchronous, in resolution.ts.
 */
import type { PolicyError } from '../common/types.js';
import { anchorOf, type Anchor, type LinkPins } from './anchor.js';
import type { DenyRule } from './deny.js';
import { DenyMemo, type RootSource } from './deny-memo.js';
import {
  applyExpansion,
  dedupeDirs,
  expandEntry,
  type EntryResult,
  type Expansion,
} from './entry.js';
import { sinceEarlier, updateEntry } from './entry-update.js';
import { isGlob } from './expand.js';
import { limitFs, memoFs } from './fs.js';
import type {
  DenyEntry,
  ParsedPolicyFile,
  PolicyContext,
  Pos,
  ResolvedPolicy,
  WatchPlan,
} from './model.js';
import { canonicalizeLoose } from './paths.js';
import { protectedRules } from './protected.js';
import { Resolution } from './resolution.js';
import { compileServerPattern } from './server-pattern.js';
import type { Block } from './server-view.js';
import { includeWatchDir } from './watch-targets.js';

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
   * and a glob walks only the changed subtrees again. `previous` alone: everything is expanded
   * again, and each server's list is updated by what its entries' expansions added and removed
   * (view-update.ts), not built anew.
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
  // Denies a known change cannot have moved are taken from the resolution before (deny-memo.ts).
  const denyMemo = new DenyMemo(options.previous, options.changed);
  const compileDeny = denyMemo.compile;
  const protectedList = await protectedRules(fs, {
    home: ctx.home,
    policyFiles: [...new Set([...policyFiles, ...(options.extraPolicyFiles ?? [])])],
    includePatterns,
    stateDir: ctx.stateDir,
    runtimeDir: ctx.runtimeDir,
    installDir: ctx.installDir,
    configHome: ctx.env.XDG_CONFIG_HOME?.startsWith('/') ? ctx.env.XDG_CONFIG_HOME : undefined,
    cacheHome: ctx.env.XDG_CACHE_HOME?.startsWith('/') ? ctx.env.XDG_CACHE_HOME : undefined,
    compileDeny,
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
  const earlier = options.previous instanceof Resolution ? options.previous.expansions : undefined;
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
          const old = earlier?.get(key);
          expansion = (
            changed !== undefined
              ? updateEntry(fs, abs, kind, anchor, old, changed)
              : expandEntry(fs, abs, kind, anchor)
          ).then((x) => sinceEarlier(x, old));
          expansions.set(key, expansion);
        }
        pending.push(expansion.then((x) => applyExpansion(x, entry, result, warn)));
      }
      blocks.push({ block, file, matches: compileServerPattern(block.pattern), entries, denies });
    }
  }
  await Promise.all(pending);
  const expanded = new Map<string, Expansion>();
  // The roots of each expansion, for the directories on the way to each deny inside a root
  // (deny-memo.ts), with what an update added and removed. A tree's matches lie inside the
  // tree, which is watched whole.
  const sources: RootSource[] = [];
  for (const [key, x] of expansions) {
    const done = await x;
    if (!done.watch.recursive) sources.push(rootSource(done));
    // Its entries hold what changed; the expansion before may go.
    done.delta = undefined;
    expanded.set(key, done);
  }
  for (const x of expanded.values()) {
    if (x.watch.dir) plan.dirs.push(x.watch.dir);
    if (x.watch.recursive) plan.recursive.push(x.watch.recursive);
  }
  const trees = plan.recursive.map((r) => r.path);
  plan.dirs.push(...(await denyMemo.watchDirs(fs, sources, trees)));
  plan.dirs = dedupeDirs(plan.dirs);
  options.pins?.sweep();
  const resolution = new Resolution({
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
  denyMemo.keep(resolution);
  return resolution;
}

/** An expansion's roots as `DenyMemo.watchDirs` takes them. */
function rootSource(x: Expansion): RootSource {
  const source: RootSource = {
    key: x,
    // An array, not a generator: resuming a generator per root was most of `watchDirs` at the
    // start of a 100,000-entry glob.
    roots: () => x.candidates.map((c) => c.canonical),
  };
  const d = x.delta;
  if (d !== undefined) {
    source.delta = {
      from: d.from,
      added: d.added.map((c) => c.canonical),
      removed: d.removed.map((c) => c.canonical),
    };
  }
  return source;
}
