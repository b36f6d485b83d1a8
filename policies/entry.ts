/** What one root entry's path or glob yields on the filesystem (docs/policy.md rules 3 and 4). */
import { constants } from 'node:fs';
import { basename, dirname } from 'node:path';
import { errnoCode } from '../common/errors.js';
import type { ExplainReason } from '../common/types.js';
import type { Anchor } from './anchor.js';
import { isGlob } from './expand.js';
import { plainBracketNote } from '../common/glob-dialect.js';
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
  /** The expansion it was given (what a later resolution compares with, see view-update.ts). */
  from?: Expansion;
  /**
   * When `from` is an update of the expansion the same entry had in the resolution before: the
   * matches that update added and removed (every other match is as it was).
   */
  delta?: MatchDelta;
}

/** One entry's matches added and removed since the resolution before (from expansion `fromId`). */
export interface MatchDelta {
  fromId: number;
  added: { canonical: string; name: string }[];
  removed: { canonical: string; name: string }[];
}

/** A readable match of a path or glob; `name` is the base name of `path`. */
export interface Candidate {
  path: string;
  canonical: string;
  name: string;
}

/** Where a written path leads, once per path and resolution (see anchor.ts). */
export type AnchorOf = (written: string) => Promise<Anchor>;

/** What one path or glob yields on the filesystem, shared by every entry that names it. */
export interface Expansion {
  /** Tells expansions apart across resolutions (`newExpansionId`). */
  id: number;
  literal: boolean;
  /** Readable matches. */
  candidates: Candidate[];
  /**
   * For an update of an earlier expansion (entry-update.ts): that expansion, and the candidates
   * added and removed since (objects of `candidates` and of `from.candidates`). Dropped once
   * the resolution has given it to its entries, so no expansion keeps the one before alive.
   */
  delta?: { from: Expansion; added: Candidate[]; removed: Candidate[] };
  /** Warnings, without the entry's own text. */
  notes: string[];
  reason?: ExplainReason;
  watch: { dir?: WatchPlan['dirs'][number]; recursive?: WatchPlan['recursive'][number] };
  /** Where the written path (and a glob's base) led: a later update reuses this only if unchanged. */
  anchors: string;
  /** A glob's walk from its canonical base, which a later update brings up to date. */
  walked?: { canonicalBase: string; result: GlobResult };
  /** Canonical paths of matches found unreadable. */
  notReadable: Set<string>;
}

let lastId = 0;

export function newExpansionId(): number {
  return ++lastId;
}

export async function expandEntry(
  fs: PolicyContext['fs'],
  abs: string,
  kind: 'directory' | 'file' | 'any',
  anchor: AnchorOf,
): Promise<Expansion> {
  const x: Expansion = {
    id: newExpansionId(),
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
  const found: Candidate[] = [];
  if (x.literal || !isGlob(abs)) {
    x.watch = await watchFor(fs, abs, x.literal, anchored);
    if (!x.literal && lstatCode === 'EACCES') {
      // A parent that cannot be searched: the path may well exist, and "missing" would mislead.
      x.reason = 'not-readable';
      x.notes.push(`cannot reach ${abs} (EACCES); it is watched and appears when readable`);
      return x;
    }
    if (!x.literal) {
      x.reason = 'missing';
      const plain = plainBracketNote(abs);
      x.notes.push(
        `${abs} does not exist (yet); it is watched and appears when created${plain === undefined ? '' : `; ${plain}`}`,
      );
      return x;
    }
    if (!anchored.ok) return refuse(x, abs, anchored);
    // A link to a path not made yet: missing, as the path itself would be, not unreadable.
    if (anchored.canonical !== abs && (await missing(fs, anchored.canonical))) {
      x.reason = 'missing';
      x.notes.push(
        `${abs} leads to ${anchored.canonical}, which does not exist (yet); it is watched and appears when created`,
      );
      return x;
    }
    found.push({ path: abs, canonical: anchored.canonical, name: basename(abs) });
  } else {
    const shape = globShape(abs);
    const base = await anchor(shape.base);
    x.anchors += JSON.stringify(base);
    x.watch = await watchFor(fs, abs, false, base);
    if (!base.ok && base.refused) return refuse(x, shape.base, base);
    const g = await expandGlob(fs, abs, kind, base.ok ? base.canonical : undefined);
    if (base.ok) x.walked = { canonicalBase: base.canonical, result: g };
    return fromGlob(fs, x, g, () => undefined);
  }
  return withReadable(fs, x, found, () => undefined);
}

/**
 * What to watch to see every change to what `abs` yields: a path's parent (or its nearest
 * existing ancestor), a glob's base (recursively for `**`), or, for a glob whose base leads
 * through a link that is refused, where the link lives; for a path or base that leads through a
 * link to a directory not made yet, where it will be made. `literal`: `abs` exists as written;
 * `base`: where the path (a glob's base) led. The daemon asks this before it walks (see
 * `watchTargets` in resolve.ts), so both must choose alike: both call this.
 */
export async function watchFor(
  fs: PolicyContext['fs'],
  abs: string,
  literal: boolean,
  base: Anchor | undefined,
): Promise<Expansion['watch']> {
  if (literal || !isGlob(abs)) {
    // A root that is a link to a directory not made yet appears where the link leads.
    const awaited = await awaitedPast(fs, abs, base);
    return { dir: { path: await nearestExisting(fs, dirname(awaited ?? abs)), depth: 0 } };
  }
  const shape = globShape(abs);
  // Not walked: watch where the link lives, to see it removed or pointed back.
  if (base !== undefined && !base.ok && base.refused)
    return { dir: { path: await nearestExisting(fs, dirname(shape.base)), depth: 0 } };
  // A base through a link to a directory not made yet: watch where it will be made.
  const awaited = await awaitedPast(fs, shape.base, base);
  if (awaited !== undefined) return { dir: { path: await nearestExisting(fs, awaited), depth: 0 } };
  const watchBase = await nearestExisting(fs, shape.base);
  if (shape.recursive && watchBase === shape.base) {
    const ignore = [...HEAVY_DIRS, '.git'].filter((h) => !abs.includes(`/${h}`));
    return { recursive: { path: watchBase, ignore } };
  }
  // Until the base exists, watch its nearest ancestor shallowly, not all of it recursively.
  if (watchBase !== shape.base || shape.depth === 0) return { dir: { path: watchBase, depth: 0 } };
  return { dir: { path: watchBase, depth: shape.depth, globs: [shape.glob] } };
}

/**
 * Where `written` leads (`anchor`), when that is elsewhere (a link on the way) and not made
 * yet. Such a path is pinned where it will be made (anchor.ts), so that is where its making is
 * seen: the nearest existing directory on the written way holds only the dangling link, and
 * nothing made where the link leads was seen there until the rescan.
 */
async function awaitedPast(
  fs: PolicyContext['fs'],
  written: string,
  anchor: Anchor | undefined,
): Promise<string | undefined> {
  if (anchor === undefined || !anchor.ok || anchor.canonical === written) return undefined;
  // Any failure: until it can be reached, it is watched where it will be.
  return (await statFailure(fs, anchor.canonical)) === undefined ? undefined : anchor.canonical;
}

/** Whether nothing is at `path` (an error other than "not there" is not an answer). */
async function missing(fs: PolicyContext['fs'], path: string): Promise<boolean> {
  const code = await statFailure(fs, path);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Why `stat` of `path` fails (its code, or 'EUNKNOWN'), or undefined when it does not. */
async function statFailure(fs: PolicyContext['fs'], path: string): Promise<string | undefined> {
  try {
    await fs.stat(path);
    return undefined;
  } catch (err) {
    return errnoCode(err) ?? 'EUNKNOWN';
  }
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
  for (const o of g.unwatchedWay)
    x.notes.push(
      `${o} is a symlink that leads through a path outside what the daemon watches for this glob (it could be re-pointed unseen); not granted`,
    );
  for (const n of g.notUtf8) x.notes.push(`${n} is not valid UTF-8 and cannot be a URI; skipped`);
  if (g.matches.length === 0) {
    x.reason =
      g.outsideBase.length > 0 || g.unwatchedWay.length > 0
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
  const readable = new Array<boolean | undefined>(found.length);
  const asked: string[] = [];
  for (let i = 0; i < found.length; i++) {
    const r = known(found[i]!);
    readable[i] = r;
    if (r === undefined) asked.push(found[i]!.canonical);
  }
  const answers = await accessAll(fs, asked, constants.R_OK);
  let n = 0;
  let all = true;
  for (let i = 0; i < found.length; i++) {
    if (readable[i] === undefined) readable[i] = answers[n++];
    if (!readable[i]) all = false;
  }
  // Every match readable (the usual case): the candidates are the matches, with no copy.
  if (all) x.candidates = found;
  else {
    found.forEach((c, i) => {
      if (readable[i]) x.candidates.push(c);
      else {
        x.notReadable.add(c.canonical);
        x.notes.push(`${c.canonical} is not readable; not granted`);
      }
    });
  }
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

/**
 * For a relative entry that misses: a relative path is read from the policy file's directory,
 * which a person writing `projects/app` for the one in their home does not expect. Not for one
 * that begins with a variable (`${HOME}/x`), which expands to a path of its own.
 */
function relativeHint(written: string): string {
  if (/^[/~$]/.test(written)) return '';
  const home = written.startsWith('..')
    ? ''
    : `; write ~/${written.replace(/^\.\//, '')} for one in your home`;
  return ` (a relative path is read from the directory of the file that holds it${home})`;
}

/** Give one entry what its path yielded, with its own names and warnings. */
export function applyExpansion(
  x: Expansion,
  entry: RootEntry,
  result: EntryResult,
  warn: (pos: Pos, message: string) => void,
): void {
  const relative = x.reason === 'missing' ? relativeHint(entry.path) : '';
  x.notes.forEach((note, i) =>
    warn(entry.pos, `${entry.path}: ${note}${i === x.notes.length - 1 ? relative : ''}`),
  );
  if (x.reason !== undefined && x.candidates.length === 0) result.reason = x.reason;
  result.from = x;
  const named = entry.name;
  if (named === undefined) {
    // Entries without a name of their own list the candidates themselves (each carries its
    // base name): no list or object per entry, and an update's list is the update's candidates.
    if (x.delta) {
      result.delta = { fromId: x.delta.from.id, added: x.delta.added, removed: x.delta.removed };
    }
    result.matches = x.candidates;
    return;
  }
  const matchOf = (c: Candidate) => ({
    canonical: c.canonical,
    name: x.literal ? named : named.replaceAll('{base}', c.name),
  });
  if (x.delta) {
    result.delta = {
      fromId: x.delta.from.id,
      added: x.delta.added.map(matchOf),
      removed: x.delta.removed.map(matchOf),
    };
  }
  for (const c of x.candidates) result.matches.push(matchOf(c));
}

/**
 * One plan per directory: the deepest, entering what any of them enters (every directory when
 * one of them does not narrow it with globs).
 */
export function dedupeDirs(dirs: WatchPlan['dirs']): WatchPlan['dirs'] {
  const best = new Map<string, WatchPlan['dirs'][number]>();
  for (const d of dirs) {
    const had = best.get(d.path);
    if (had === undefined) {
      best.set(d.path, { ...d, ...(d.globs ? { globs: [...d.globs] } : {}) });
      continue;
    }
    had.depth = Math.max(had.depth, d.depth);
    if (had.globs === undefined || d.globs === undefined) delete had.globs;
    else for (const g of d.globs) if (!had.globs.includes(g)) had.globs.push(g);
  }
  for (const d of best.values()) if (d.depth === 0) delete d.globs;
  return [...best.values()];
}
