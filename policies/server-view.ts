/**
 * What one set of matching server blocks resolves to: the roots the servers get, the denies that
 * apply to them, and why an entry's matches were dropped. The denies every server shares are
 * evaluated once per path (`CommonEffects`), and kept from one resolution to the next when they
 * did not change.
 */
import type { Root } from '../common/types.js';
import { denyMeta, EffectIndex, type Effect } from './common-effect.js';
import { covers, type DenyRule } from './deny.js';
import type { EntryResult } from './entry.js';
import { includeMeta } from './include-meta.js';
import type { ParsedPolicyFile, RootEntry, ServerBlock } from './model.js';
import { compareUtf8, listedPath, toUri } from './paths.js';

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
    } else {
      this.effects = new Map();
      this.rootObjects = new Map();
      this.index = new EffectIndex(rules);
    }
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
 */
export function* viewSteps(blocks: Block[], d: ViewDenies): Generator<void, ServerView> {
  const own = blocks.flatMap((b) => b.denies);
  const denies = [...d.globalDenies, ...own, ...d.protectedList];
  const agg = new Map<string, Agg>();
  let done = 0;
  for (const b of blocks) {
    for (const e of b.entries) {
      if (e.expired) continue;
      for (const m of e.matches) {
        if (++done % VIEW_SLICE === 0) yield;
        // Keyed by the path the root's URI names: the list and the decision are one computation.
        const canonical = listedPath(m.canonical);
        agg.set(canonical, fold(agg.get(canonical), e, m.name));
      }
    }
  }
  const dropped = new Map<string, DenyRule>();
  const counts = new Map<string, number>();
  const info: RootInfo[] = [];
  for (const [canonical, a] of agg) {
    if (++done % VIEW_SLICE === 0) yield;
    if (a.n > 1) counts.set(canonical, a.n);
    const r = rootOf(canonical, a, own, d);
    if ('kill' in r) dropped.set(canonical, r.kill);
    else info.push(r);
  }
  yield;
  sortByCanonical(info);
  return {
    roots: info.map((i) => i.root),
    info,
    denies,
    dropped,
    nextExpiry: nextExpiryOf(blocks),
    counts,
  };
}

/** What the matches naming one path give it so far, in entry order. */
export interface Agg {
  name: string;
  rule: RootEntry;
  writable: boolean;
  expires: number | undefined;
  forever: boolean;
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

/** The root a path's matches give it, or the deny that drops it (`own`: the blocks' denies). */
export function rootOf(
  canonical: string,
  a: Agg,
  own: DenyRule[],
  d: ViewDenies,
): RootInfo | { kill: DenyRule } {
  // The denies every server shares are evaluated once per path; a block's own denies per view.
  const common = d.common.of(canonical);
  const killer =
    (common.kill === undefined ? undefined : d.common.rules[common.kill]) ??
    own.find((r) => r.access === 'all' && covers(r, canonical));
  if (killer) return { kill: killer };
  const readOnly =
    !a.writable || common.write || own.some((r) => r.access === 'write' && covers(r, canonical));
  const expires = !a.forever && a.expires !== undefined ? a.expires : undefined;
  // Views share identical roots: a thousand servers over one tree hold one object per root.
  const shared = own.length === 0 ? (d.common.rootObjects.get(canonical) ?? []) : undefined;
  let root = shared?.find(
    (r) => r.name === a.name && r.readOnly === readOnly && r.expires === expires,
  )?.root;
  if (!root) {
    const meta: Root['_meta'] = { 'mcp-roots/readOnly': readOnly };
    if (expires !== undefined) meta['mcp-roots/expiresAt'] = new Date(expires).toISOString();
    const holes =
      own.length === 0
        ? common.meta
        : denyMeta([...d.globalDenies, ...own, ...d.protectedList], canonical);
    if (holes.length > 0) meta['mcp-roots/deny'] = holes;
    const includes = includeMeta(d.protectedList, canonical);
    if (includes.length > 0) meta['mcp-roots/include'] = includes;
    root = { uri: toUri(canonical), name: a.name, _meta: meta };
    if (shared !== undefined) {
      if (shared.length === 0) d.common.rootObjects.set(canonical, shared);
      shared.push({ name: a.name, readOnly, expires, root });
    }
  }
  return { canonical, readOnly, root, rule: a.rule };
}

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
