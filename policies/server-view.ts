/**
 * What one set of matching server blocks resolves to: the roots the servers get, the denies that
 * apply to them, and why an entry's matches were dropped. The denies every server shares are
 * evaluated once per path (`CommonEffects`), and kept from one resolution to the next when they
 * did not change.
 */
import type { DenyMeta, Root } from '../common/types.js';
import { denyMeta, EffectIndex, type Effect } from './common-effect.js';
import { covers, type DenyRule } from './deny.js';
import type { EntryResult } from './entry.js';
import { isGlob } from './expand.js';
import { includeMeta } from './include-meta.js';
import type { ParsedPolicyFile, RootEntry, ServerBlock } from './model.js';
import { MatchMerge, orderedMatches, type OrderedMatches } from './match-order.js';
import { compareUtf8, toUri } from './paths.js';

export { holeIn } from './common-effect.js';

/** One server block of a policy file, its entries expanded and its denies compiled. */
export interface Block {
  block: ServerBlock;
  file: ParsedPolicyFile;
  matches: (name: string) => boolean;
  entries: EntryResult[];
  denies: DenyRule[];
}

/** A root as the access decision sees it. */
export interface RootInfo {
  canonical: string;
  readOnly: boolean;
  root: Root;
  /** The entry a decision names: one that makes the root writable, if any does. */
  rule: RootEntry;
}

/** What one set of matching blocks resolves to (shared by every name that matches that set). */
export interface ServerView {
  roots: Root[];
  info: RootInfo[];
  denies: DenyRule[];
  /** Why each entry's matches were dropped, keyed by canonical path. */
  dropped: Map<string, DenyRule>;
  nextExpiry: number | undefined;
  /** Entries naming one path (not a glob) that have expired: a refusal names the one it falls in. */
  expired: RootEntry[];
  /** Listed or dropped paths reached by more than one match (the rest by exactly one). */
  counts: Map<string, number>;
  /** For a view updated from the one before (view-update.ts): that view's roots, and the URIs in and out. */
  change?: RootsChange;
}

/** How a server's list differs from the list before: URIs added and removed, nothing else. */
export interface RootsChange {
  from: Root[];
  added: string[];
  removed: string[];
}

/** Past this many remembered paths, a resolution starts its caches afresh (deleted paths go). */
const SHARED_CACHE_MAX = 400_000;

/** Denies as text: equal text, equal effect on every path. */
export function denySignature(rules: DenyRule[]): string {
  return rules
    .map((d) =>
      [d.source, d.access, d.display, d.literal, d.pattern, d.base, d.entriesOnly, d.inMeta].join(
        '\0',
      ),
    )
    .join('\n');
}

/**
 * What the denies every server shares (the policy's global ones, then the protected paths) do to
 * each canonical path, and the root objects built from that. Both depend on nothing else: a
 * recompute with the same denies shares them, so a 30,000-root list is not rebuilt.
 */
export class CommonEffects {
  private readonly signature: string;
  /** Per canonical path; `kill` is the index of the dropping rule among `rules`. */
  private readonly effects: Map<string, Effect>;
  /** The rules arranged to answer for 100,000 siblings without testing each rule on each. */
  private readonly index: EffectIndex;
  /** Root objects by path, one per name, access and expiry seen there: identical roots are one object. */
  readonly rootObjects: Map<string, SharedRoot[]>;
  /**
   * Changes exactly when `effects` starts afresh: a root made under one generation is still the
   * root of its path, name, access and expiry under the same one (see `rootOfMatch`).
   */
  readonly generation: object;
  /** `_meta` objects without an expiry, by their list of holes (shared: see `EffectIndex`), read-only or not. */
  private readonly metas: WeakMap<DenyMeta[], { [readOnly: string]: Root['_meta'] }>;

  constructor(
    readonly rules: DenyRule[],
    before: CommonEffects | undefined,
  ) {
    this.signature = denySignature(rules);
    if (
      before !== undefined &&
      before.signature === this.signature &&
      before.effects.size + before.rootObjects.size < SHARED_CACHE_MAX
    ) {
      this.effects = before.effects;
      this.rootObjects = before.rootObjects;
      this.index = before.index;
      this.generation = before.generation;
      this.metas = before.metas;
    } else {
      this.effects = new Map();
      this.rootObjects = new Map();
      this.index = new EffectIndex(rules);
      this.generation = {};
      this.metas = new WeakMap();
    }
  }

  /**
   * `of` without keeping the answer: for a root kept on its match (`rootOfMatch`), which asks
   * once per match, not once per view.
   */
  effect(canonical: string): Effect {
    return this.effects.get(canonical) ?? this.index.effect(canonical);
  }

  /**
   * A root's `_meta` for these holes (one of the index's shared lists): roots without an expiry
   * share one object per list and access, as they share the list. Root objects and their
   * `_meta` are never changed once made.
   */
  metaOf(readOnly: boolean, expires: number | undefined, holes: DenyMeta[]): Root['_meta'] {
    if (expires !== undefined) return metaOf(readOnly, expires, holes);
    let byAccess = this.metas.get(holes);
    if (byAccess === undefined) {
      byAccess = {};
      this.metas.set(holes, byAccess);
    }
    const key = readOnly ? 'ro' : 'rw';
    return (byAccess[key] ??= metaOf(readOnly, undefined, holes));
  }

  /**
   * What the shared denies do to a root at this canonical path. A shared cache holds the index
   * of the dropping rule: `rules[kill]` is this resolution's own rule object.
   */
  of(canonical: string): Effect {
    let e = this.effects.get(canonical);
    if (!e) {
      e = this.index.effect(canonical);
      this.effects.set(canonical, e);
    }
    return e;
  }
}

/** The denies of a view in order: the global ones, the blocks' own, then the protected paths. */
export interface ViewDenies {
  globalDenies: DenyRule[];
  protectedList: DenyRule[];
  common: CommonEffects;
}

/** The roots `blocks` give a server, with the denies applied. */
export function computeView(blocks: Block[], d: ViewDenies): ServerView {
  const steps = viewSteps(blocks, d);
  let step = steps.next();
  while (!step.done) step = steps.next();
  return step.value;
}

/** How many matches a view takes between two places to let the event loop turn. */
const VIEW_SLICE = 1024;

/**
 * `computeView` in steps: each `yield` is a place where the caller may let the event loop turn
 * (a view of 30,000 roots built in one go holds every other server's answers).
 *
 * Each entry's matches come in the order of the paths their roots name (UTF-8 order, the list's
 * own: `orderedMatches`, made once per match list), and the view merges those lists
 * (`MatchMerge`), taking the matches of one path together, in entry order: no array of every
 * match and no sort per view (a view of 100,000 roots made two maps of 100,000 and sorted
 * twice). A path named by one match (nearly all) takes its root from that match
 * (`rootOfMatch`), so views and resolutions that share an expansion share its roots.
 */
export function* viewSteps(blocks: Block[], d: ViewDenies): Generator<void, ServerView> {
  const own = blocks.flatMap((b) => b.denies);
  const denies = [...d.globalDenies, ...own, ...d.protectedList];
  // Every active entry with matches, in entry order, and its matches in order.
  const entries: EntryResult[] = [];
  const lists: OrderedMatches<Match>[] = [];
  let surrogates = false;
  for (let bi = 0; bi < blocks.length; bi++) {
    const es = blocks[bi]!.entries;
    for (let ei = 0; ei < es.length; ei++) {
      const e = es[ei]!;
      if (e.expired || e.matches.length === 0) continue;
      const o = orderedMatches<Match>(e.matches);
      entries.push(e);
      lists.push(o);
      if (o.surrogates) surrogates = true;
    }
  }
  yield;
  const merge = new MatchMerge(lists, surrogates);
  const dropped = new Map<string, DenyRule>();
  const counts = new Map<string, number>();
  const info: RootInfo[] = [];
  let done = 0;
  while (merge.next()) {
    if (++done % VIEW_SLICE === 0) yield;
    const canonical = merge.key;
    let r: RootInfo | { kill: DenyRule };
    if (merge.count === 1) {
      r = rootOfMatch(canonical, entries[merge.from[0]!]!, merge.matches[0]!, own, d);
    } else {
      let a: Agg | undefined;
      for (let k = 0; k < merge.count; k++)
        a = fold(a, entries[merge.from[k]!]!, merge.matches[k]!.name);
      counts.set(canonical, a!.n);
      r = rootOf(canonical, a!, own, d);
    }
    if ('kill' in r) dropped.set(canonical, r.kill);
    else info.push(r);
  }
  return {
    roots: info.map((i) => i.root),
    info,
    denies,
    dropped,
    nextExpiry: nextExpiryOf(blocks),
    expired: expiredOf(blocks),
    counts,
  };
}

/** A match as an entry holds it, with the root it last gave (see `rootOfMatch`). */
interface Match {
  canonical: string;
  name: string;
  slot?: RootSlot;
}

/** The root a match gave alone, and what that root was made from. */
interface RootSlot {
  /** The shared denies' generation (`CommonEffects.generation`) it was judged under. */
  generation: object;
  writable: boolean;
  expires: number | undefined;
  /** The root (undefined when a shared deny drops the path: `kill`, its index among them). */
  root: Root | undefined;
  readOnly: boolean;
  kill: number;
}

/**
 * The root of a path named by one match `m` of entry `e` alone: `rootOf` of that match, kept on
 * the match for the next view that asks with the same shared denies, access and expiry (a match
 * never changes; its root depends on nothing else when the view has no denies of its own). A
 * big glob's 100,000 matches then carry their roots from the resolution that made them to every
 * later one, and a start makes one object per root, not a map entry and a list per path.
 */
export function rootOfMatch(
  canonical: string,
  e: EntryResult,
  m: Match,
  own: DenyRule[],
  d: ViewDenies,
): RootInfo | { kill: DenyRule } {
  if (own.length > 0) return rootOf(canonical, fold(undefined, e, m.name), own, d);
  // As `fold` would make it for this one match: no object made for a match whose root is kept.
  const generation = d.common.generation;
  const writable = !e.readOnly;
  const expires = e.entry.expires;
  const slot = m.slot;
  if (
    slot !== undefined &&
    slot.generation === generation &&
    slot.writable === writable &&
    slot.expires === expires
  ) {
    if (slot.root === undefined) return { kill: d.common.rules[slot.kill]! };
    return { canonical, readOnly: slot.readOnly, root: slot.root, rule: e.entry };
  }
  const common = d.common.effect(canonical);
  const r = rootFrom(canonical, m.name, writable, expires, e.entry, own, d, common, false);
  const killed = 'kill' in r;
  m.slot = {
    generation,
    writable,
    expires,
    root: killed ? undefined : r.root,
    readOnly: killed ? false : r.readOnly,
    kill: killed ? common.kill! : -1,
  };
  return r;
}

/** What the matches naming one path give it so far, in entry order. */
export interface Agg {
  name: string;
  rule: RootEntry;
  writable: boolean;
  expires: number | undefined;
  forever: boolean;
  /** The latest `expires` among the writable entries, and whether one of them never expires. */
  writableUntil: number | undefined;
  writableForever: boolean;
  /** The entry that named it first. */
  from: EntryResult;
  /** How many matches named it. */
  n: number;
}

/** `a` (undefined: nothing yet) with one more match of entry `e`, named `name`. */
export function fold(a: Agg | undefined, e: EntryResult, name: string): Agg {
  const exp = e.entry.expires;
  if (!a) {
    return {
      name,
      rule: e.entry,
      writable: !e.readOnly,
      expires: exp,
      forever: exp === undefined,
      writableUntil: e.readOnly ? undefined : exp,
      writableForever: !e.readOnly && exp === undefined,
      from: e,
      n: 1,
    };
  }
  a.n++;
  if (!a.writable && !e.readOnly) a.rule = e.entry;
  // One entry reaching a path twice (a link and its target): the smaller name, so that the
  // name does not depend on the order the walk met them.
  if (a.from === e && compareUtf8(name, a.name) < 0) a.name = name;
  a.writable ||= !e.readOnly;
  a.forever ||= exp === undefined;
  if (exp !== undefined) a.expires = a.expires === undefined ? exp : Math.max(a.expires, exp);
  if (!e.readOnly) {
    a.writableForever ||= exp === undefined;
    if (exp !== undefined)
      a.writableUntil = a.writableUntil === undefined ? exp : Math.max(a.writableUntil, exp);
  }
  return a;
}

/** The earliest `expires` among the active entries that yield something. */
export function nextExpiryOf(blocks: Block[]): number | undefined {
  let next: number | undefined;
  for (const b of blocks) {
    for (const e of b.entries) {
      const exp = e.entry.expires;
      if (e.expired || exp === undefined || e.matches.length === 0) continue;
      next = next === undefined ? exp : Math.min(next, exp);
    }
  }
  return next;
}

/** The expired entries that name one path: what a refusal of a path in one of them names. */
export function expiredOf(blocks: Block[]): RootEntry[] {
  const out: RootEntry[] = [];
  for (const b of blocks)
    for (const e of b.entries)
      if (e.expired && e.entry.abs !== undefined && !isGlob(e.entry.abs)) out.push(e.entry);
  return out;
}

/** The root a path's matches give it, or the deny that drops it (`own`: the blocks' denies). */
export function rootOf(
  canonical: string,
  a: Agg,
  own: DenyRule[],
  d: ViewDenies,
): RootInfo | { kill: DenyRule } {
  const expires = !a.forever && a.expires !== undefined ? a.expires : undefined;
  // Writable through entries that end before the root does (a write grant of a path a read-only
  // entry names too): a sandbox must know when its mount turns read-only without being told.
  const writableUntil =
    a.writable &&
    !a.writableForever &&
    a.writableUntil !== undefined &&
    (expires === undefined || a.writableUntil < expires)
      ? a.writableUntil
      : undefined;
  return rootFrom(
    canonical,
    a.name,
    a.writable,
    expires,
    a.rule,
    own,
    d,
    d.common.of(canonical),
    true,
    writableUntil,
  );
}

/**
 * `rootOf` with the shared denies' effect on the path given; `share`: look for an identical root
 * among those kept by path (`rootObjects`), and keep this one there.
 */
function rootFrom(
  canonical: string,
  name: string,
  writable: boolean,
  expires: number | undefined,
  rule: RootEntry,
  own: DenyRule[],
  d: ViewDenies,
  common: Effect,
  share: boolean,
  writableUntil?: number,
): RootInfo | { kill: DenyRule } {
  // The denies every server shares are evaluated once per path; a block's own denies per view.
  const killer =
    (common.kill === undefined ? undefined : d.common.rules[common.kill]) ??
    own.find((r) => r.access === 'all' && covers(r, canonical));
  if (killer) return { kill: killer };
  const readOnly =
    !writable || common.write || own.some((r) => r.access === 'write' && covers(r, canonical));
  const until = readOnly ? undefined : writableUntil;
  // Views share identical roots: a thousand servers over one tree hold one object per root.
  const shared =
    share && own.length === 0 ? (d.common.rootObjects.get(canonical) ?? []) : undefined;
  let root = shared?.find(
    (r) =>
      r.name === name &&
      r.readOnly === readOnly &&
      r.expires === expires &&
      r.writableUntil === until,
  )?.root;
  if (!root) {
    const holes =
      own.length === 0
        ? common.meta
        : denyMeta([...d.globalDenies, ...own, ...d.protectedList], canonical);
    // The include patterns a sandbox must keep it from adding to: rare, so such a root has a
    // `_meta` of its own and every other shares one (`metaOf` of the index).
    const includes = includeMeta(d.protectedList, canonical);
    const meta =
      own.length === 0 && includes.length === 0 && until === undefined
        ? d.common.metaOf(readOnly, expires, holes)
        : metaOf(readOnly, expires, holes, includes, until);
    root = { uri: toUri(canonical), name, _meta: meta };
    if (shared !== undefined) {
      if (shared.length === 0) d.common.rootObjects.set(canonical, shared);
      shared.push({ name, readOnly, expires, writableUntil: until, root });
    }
  }
  return { canonical, readOnly, root, rule };
}

/**
 * A root's `_meta`: its access (and when its writing ends, if before the root does), its expiry,
 * the denies inside it and the includes that reach it.
 */
function metaOf(
  readOnly: boolean,
  expires: number | undefined,
  holes: DenyMeta[],
  includes: string[] = [],
  writableUntil?: number,
): Root['_meta'] {
  const meta: Root['_meta'] = { 'mcp-roots/readOnly': readOnly };
  if (writableUntil !== undefined)
    meta['mcp-roots/writableUntil'] = new Date(writableUntil).toISOString();
  if (expires !== undefined) meta['mcp-roots/expiresAt'] = new Date(expires).toISOString();
  if (holes.length > 0) meta['mcp-roots/deny'] = holes;
  if (includes.length > 0) meta['mcp-roots/include'] = includes;
  return meta;
}

/** A root object kept for the next resolution, with what it was built from. */
interface SharedRoot {
  name: string;
  readOnly: boolean;
  expires: number | undefined;
  writableUntil: number | undefined;
  root: Root;
}
