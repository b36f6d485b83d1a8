/** What one root entry's path or glob yields on the filesystem (docs/policy.md rules 3 and 4). */
import { constants } from 'node:fs';
import { basename, dirname } from 'node:path';
import { errnoCode } from '../common/errors.js';
import type { ExplainReason } from '../common/types.js';
import type { Anchor } from './anchor.js';
import { isGlob } from './expand.js';
import { accessAll } from './fs.js';
import { expandGlob, globShape, HEAVY_DIRS, type GlobMatch, type GlobResult } from './glob.js';
import type { PolicyContext, Pos, RootEntry, WatchPlan } from './model.js';
import { nearestExisting } from './watch-targets.js';

/** One root entry of one server block, resolved against the filesystem. */
export interface EntryResult {
  entry: RootEntry;
  readOnly: boolean;
  expired: boolean;
  matches: { canonical: string; name: string }[];
  reason?: ExplainReason;
}

/** Where a written path leads, once per path and resolution (see anchor.ts). */
export type AnchorOf = (written: string) => Promise<Anchor>;

/** What one path or glob yields on the filesystem, shared by every entry that names it. */
export interface Expansion {
  literal: boolean;
  /** Readable matches. */
  candidates: { path: string; canonical: string }[];
  /** Warnings, without the entry's own text. */
  notes: string[];
  /** The matches named by their base names, made once for every entry that gives no name. */
  defaultMatches?: { canonical: string; name: string }[];
  reason?: ExplainReason;
  watch: { dir?: WatchPlan['dirs'][number]; recursive?: WatchPlan['recursive'][number] };
  /** Where the written path (and a glob's base) led: a later update reuses this only if unchanged. */
  anchors: string;
  /** A glob's walk from its canonical base, which a later update brings up to date. */
  walked?: { canonicalBase: string; result: GlobResult };
  /** Canonical paths of matches found unreadable. */
  notReadable: Set<string>;
}

export async function expandEntry(
  fs: PolicyContext['fs'],
  abs: string,
  kind: 'directory' | 'file' | 'any',
  anchor: AnchorOf,
): Promise<Expansion> {
  const x: Expansion = {
    literal: false,
    candidates: [],
    notes: [],
    watch: {},
    anchors: '',
    notReadable: new Set(),
  };
  // Pinned even when missing or a glob: a link later created at this very path is then refused.
  const anchored = await anchor(abs);
  x.anchors = JSON.stringify(anchored);
  let lstatCode: string | undefined;
  try {
    await fs.lstat(abs);
    x.literal = true;
  } catch (err) {
    x.literal = false;
    lstatCode = errnoCode(err);
  }
  const found: { path: string; canonical: string }[] = [];
  if (x.literal || !isGlob(abs)) {
    x.watch.dir = { path: await nearestExisting(fs, dirname(abs)), depth: 0 };
    if (!x.literal && lstatCode === 'EACCES') {
      // A parent that cannot be searched: the path may well exist, and "missing" would mislead.
      x.reason = 'not-readable';
      x.notes.push(`cannot reach ${abs} (EACCES); it is watched and appears when readable`);
      return x;
    }
    if (!x.literal) {
      x.reason = 'missing';
      x.notes.push(`${abs} does not exist (yet); it is watched and appears when created`);
      return x;
    }
    if (!anchored.ok) return refuse(x, abs, anchored);
    found.push({ path: abs, canonical: anchored.canonical });
  } else {
    const shape = globShape(abs);
    const base = await anchor(shape.base);
    x.anchors += JSON.stringify(base);
    if (!base.ok && base.refused) {
      // Not walked: watch where the link lives, to see it removed or pointed back.
      x.watch.dir = { path: await nearestExisting(fs, dirname(shape.base)), depth: 0 };
      return refuse(x, shape.base, base);
    }
    const watchBase = await nearestExisting(fs, shape.base);
    if (shape.recursive && watchBase === shape.base) {
      const ignore = [...HEAVY_DIRS, '.git'].filter((h) => !abs.includes(`/${h}`));
      x.watch.recursive = { path: watchBase, ignore };
    } else {
      // Until the base exists, watch its nearest ancestor shallowly, not all of it recursively.
      x.watch.dir = { path: watchBase, depth: watchBase === shape.base ? shape.depth : 0 };
    }
    const g = await expandGlob(fs, abs, kind, base.ok ? base.canonical : undefined);
    if (base.ok) x.walked = { canonicalBase: base.canonical, result: g };
    return fromGlob(fs, x, g, () => undefined);
  }
  return withReadable(fs, x, found, () => undefined);
}

/**
 * Fill `x` from a glob's walk. `known` tells a match's readability when an earlier expansion
 * found it and nothing since can have changed it (undefined: ask the filesystem).
 */
export function fromGlob(
  fs: PolicyContext['fs'],
  x: Expansion,
  g: GlobResult,
  known: (match: GlobMatch) => boolean | undefined,
): Promise<Expansion> {
  for (const u of g.unreadable) x.notes.push(`cannot read ${u.path} (${u.code}); skipped`);
  for (const o of g.outsideBase)
    x.notes.push(`${o} is a symlink that leads outside what the glob matches; not granted`);
  for (const n of g.notUtf8) x.notes.push(`${n} is not valid UTF-8 and cannot be a URI; skipped`);
  if (g.matches.length === 0) {
    x.reason =
      g.outsideBase.length > 0
        ? 'outside-base'
        : g.unreadable.length > 0
          ? 'not-readable'
          : 'missing';
    if (x.reason === 'missing') x.notes.push('matches nothing (yet); it is watched');
    return Promise.resolve(x);
  }
  return withReadable(fs, x, g.matches, known);
}

/** Keep the readable matches as candidates; note the others. */
async function withReadable(
  fs: PolicyContext['fs'],
  x: Expansion,
  found: GlobMatch[],
  known: (match: GlobMatch) => boolean | undefined,
): Promise<Expansion> {
  // Most matches of an update are known: ask the filesystem (and wait) only for the rest.
  const readable = found.map(known);
  const asked = readable.flatMap((r, i) => (r === undefined ? [i] : []));
  const answers = await accessAll(
    fs,
    asked.map((i) => found[i]!.canonical),
    constants.R_OK,
  );
  asked.forEach((at, n) => (readable[at] = answers[n]));
  found.forEach((c, i) => {
    if (readable[i]) x.candidates.push(c);
    else {
      x.notReadable.add(c.canonical);
      x.notes.push(`${c.canonical} is not readable; not granted`);
    }
  });
  if (x.candidates.length === 0) x.reason = 'not-readable';
  return x;
}

/** The entry yields nothing: its path leads where it may not be followed, or cannot be resolved. */
function refuse(x: Expansion, written: string, a: Anchor & { ok: false }): Expansion {
  if (a.refused) {
    x.reason = 'symlink-refused';
    x.notes.push(a.note);
  } else {
    x.reason = a.code === 'EACCES' ? 'not-readable' : 'missing';
    x.notes.push(`cannot resolve ${written} (${a.code})`);
  }
  return x;
}

/** Give one entry what its path yielded, with its own names and warnings. */
export function applyExpansion(
  x: Expansion,
  entry: RootEntry,
  result: EntryResult,
  warn: (pos: Pos, message: string) => void,
): void {
  for (const note of x.notes) warn(entry.pos, `${entry.path}: ${note}`);
  if (x.reason !== undefined && x.candidates.length === 0) result.reason = x.reason;
  if (entry.name === undefined) {
    // Entries without a name of their own share one list of matches per expansion.
    x.defaultMatches ??= x.candidates.map((c) => ({
      canonical: c.canonical,
      name: basename(c.path),
    }));
    result.matches = x.defaultMatches;
    return;
  }
  for (const c of x.candidates) {
    const name = x.literal ? entry.name : entry.name.replaceAll('{base}', basename(c.path));
    result.matches.push({ canonical: c.canonical, name });
  }
}

export function dedupeDirs(dirs: WatchPlan['dirs']): WatchPlan['dirs'] {
  const best = new Map<string, number>();
  for (const d of dirs) best.set(d.path, Math.max(best.get(d.path) ?? -1, d.depth));
  return [...best].map(([path, depth]) => ({ path, depth }));
}
