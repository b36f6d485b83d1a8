/**
 * Whether a deny or protected pattern can match inside a directory in a way that depends on where
 * the directory is (docs/policy.md, "Moves"). Moving such a directory would carry what the rule
 * covers out of its reach, or carry content in under it, so a write of it is refused.
 *
 * A pattern is run as a small NFA over path segments: state `i` means "the next segment must match
 * pattern segment i"; a `**` state loops on any segment and may be skipped. After consuming the
 * directory's own segments, the directory is *position-dependent* for the pattern when a state is
 * live that a directory anywhere else would not have: for a pattern that starts with `**`, any
 * state outside the start closure (which every directory keeps, because the leading `**` absorbs
 * it); for an anchored pattern, any state at all. Every live state can still match some non-empty
 * rest, so the answer errs towards refusing.
 */
import { basename, dirname, sep } from 'node:path';
import { DENY_GLOB, GLOB_CHARACTERS, globMatcher } from '../common/glob-dialect.js';
import type { DenyRule } from './deny.js';
import { pathProbe } from './fs.js';
import type { FsView } from './model.js';
import { canonicalizeLoose, isStrictlyInside } from './paths.js';

/** Brace alternatives with `/` inside are expanded up to this many; beyond, the rule refuses all. */
const MAX_ALTERNATIVES = 64;

type Segment = { any: true } | { any: false; match: (name: string) => boolean };

/**
 * One alternative of a pattern, split into segments. States are bits of a number: a pattern has at
 * most MAX_SEGMENTS segments, so its states (one per segment and the accept state) fit in one.
 * A check of a write runs every rule's automata over every segment of the path (thousands for
 * a long argument), so a step must allocate nothing.
 */
interface Automaton {
  segs: Segment[];
  /** Leading `**`: the start closure is where every directory stands. */
  floating: boolean;
  /** The start closure. */
  start: number;
  /** For each state, the states reached from it through `**` segments without consuming one. */
  closures: number[];
  /**
   * How many of a path's last names decide, for a pattern whose only `**` leads (`**\/a/b`):
   * its start closure stays live at every step and a later state is reached only by matching
   * the names that follow, one state per name, so a state entered earlier has died by the end.
   * Undefined: every name counts.
   */
  window: number | undefined;
  /**
   * For a floating pattern whose next segment is a plain name (`**\/.git/modules/**\/config`):
   * that name. Every state past the start is reached through it, so a path with no such name
   * advances nothing, and is answered without running the automaton over its names.
   */
  gate: string | undefined;
}

/** Segments per alternative whose state set fits one 31-bit number (longer: `advancedLong`). */
const MAX_SEGMENTS = 30;

/** The last path split into names: every rule of one check asks about the same path. */
let lastPath: string | undefined;
let lastNames: string[] = [];

/** A pattern compiled for the question; `undefined` automata means "could not analyse: refuse". */
interface Compiled {
  automata: Automaton[] | undefined;
}

/** By pattern text: rules are compiled anew on every resolution, their patterns rarely change. */
const compiled = new Map<string, Compiled>();

/**
 * True when the rule could match a strict descendant `path/r` of `path` in a way that depends on
 * where `path` is: a literal or protected path below it, or a pattern that `path`'s own segments
 * have advanced. `**\/NAME` with one plain or glob segment never depends on the position.
 */
export function positionDependent(rule: DenyRule, path: string): boolean {
  if (rule.literal !== undefined && isStrictlyInside(rule.literal, path)) return true;
  if (rule.pattern === undefined) return false;
  // An absolute glob's base below the path: whatever the glob matches would move with it.
  if (rule.base !== undefined && isStrictlyInside(rule.base, path)) return true;
  let c = compiled.get(rule.pattern);
  if (!c) {
    c = { automata: compilePattern(rule.pattern) };
    if (compiled.size >= 10_000) compiled.clear();
    compiled.set(rule.pattern, c);
  }
  if (c.automata === undefined) return true;
  if (path !== lastPath) {
    lastNames = path.split(sep).filter((s) => s !== '');
    lastPath = path;
  }
  const names = lastNames;
  return c.automata.some((a) => advanced(a, names));
}

/** Run the automaton over `names`; true when a live state beyond where every path stands remains. */
function advanced(a: Automaton, names: readonly string[]): boolean {
  if (a.gate !== undefined && !names.includes(a.gate)) return false;
  if (a.segs.length > MAX_SEGMENTS) return advancedLong(a, names);
  let states = a.start;
  const from = a.window === undefined ? 0 : Math.max(0, names.length - a.window);
  for (let n = from; n < names.length; n++) {
    const name = names[n]!;
    let next = 0;
    for (let live = states, i = 0; live !== 0; live >>>= 1, i++) {
      if ((live & 1) === 0) continue;
      const seg = a.segs[i];
      if (seg === undefined) continue; // accept state: consumes nothing
      if (seg.any) next |= 1 << i;
      else if (seg.match(name)) next |= 1 << (i + 1);
    }
    states = closed(a.closures, next);
    if (states === 0) return false;
  }
  // The accept state left out: only the path itself matches there, and `covers` decides that.
  const beyond = states & ~(1 << a.segs.length);
  return (a.floating ? beyond & ~a.start : beyond) !== 0;
}

/** `advanced` for a pattern of more than MAX_SEGMENTS segments, its states in a set. */
function advancedLong(a: Automaton, names: readonly string[]): boolean {
  const closure = (from: Iterable<number>): Set<number> => {
    const out = new Set<number>();
    for (const i of from) {
      out.add(i);
      for (let j = i; j < a.segs.length && a.segs[j]!.any;) out.add(++j);
    }
    return out;
  };
  const start = closure([0]);
  let states = start;
  for (const name of names) {
    const next: number[] = [];
    for (const i of states) {
      const seg = a.segs[i];
      if (seg === undefined) continue;
      if (seg.any) next.push(i);
      else if (seg.match(name)) next.push(i + 1);
    }
    states = closure(next);
    if (states.size === 0) return false;
  }
  for (const i of states) if (i < a.segs.length && (!a.floating || !start.has(i))) return true;
  return false;
}

/** `states` and every state their `**` segments reach without consuming one. */
function closed(closures: readonly number[], states: number): number {
  let out = 0;
  for (let live = states, i = 0; live !== 0; live >>>= 1, i++) if (live & 1) out |= closures[i]!;
  return out;
}

const segmentMatchers = new Map<string, (name: string) => boolean>();
function segmentMatcher(glob: string): (name: string) => boolean {
  let m = segmentMatchers.get(glob);
  if (!m) {
    // A segment with no glob or escape character is compared as it is, without compiling.
    m = GLOB_CHARACTERS.test(glob) ? globMatcher(glob, DENY_GLOB) : (n) => n === glob;
    if (segmentMatchers.size >= 10_000) segmentMatchers.clear();
    segmentMatchers.set(glob, m);
  }
  return m;
}

/** Split a `**\/` pattern or an absolute glob into automata, one per brace alternative with `/`. */
function compilePattern(pattern: string): Automaton[] | undefined {
  const alternatives = expandSlashBraces(pattern);
  if (alternatives === undefined) return undefined;
  const automata: Automaton[] = [];
  for (const alt of alternatives) {
    const segs: Segment[] = alt
      .split('/')
      .filter((s) => s !== '')
      .map((s) =>
        // `a**b` is a plain `*` to picomatch, but err towards the looser reading.
        s.includes('**') ? { any: true } : { any: false, match: segmentMatcher(s) },
      );
    if (segs.length > MAX_SEGMENTS) {
      automata.push({
        segs,
        floating: segs[0]?.any === true,
        start: 0,
        closures: [],
        window: undefined,
        gate: undefined,
      });
      continue;
    }
    const closures = segs.map((_, i) => {
      let bits = 1 << i;
      for (let j = i; j < segs.length && segs[j]!.any;) bits |= 1 << ++j;
      return bits;
    });
    closures.push(1 << segs.length);
    const floating = segs[0]?.any === true;
    const onlyLeading = floating && segs.slice(1).every((seg) => !seg.any);
    const next = alt.split('/').filter((s) => s !== '')[1];
    automata.push({
      segs,
      floating,
      start: closures[0]!,
      closures,
      window: onlyLeading ? segs.length : undefined,
      gate:
        floating && next !== undefined && !segs[1]!.any && !GLOB_CHARACTERS.test(next)
          ? next
          : undefined,
    });
  }
  return automata;
}

/**
 * Expand every `{...}` group that contains a `/` (a group within one segment is left to
 * picomatch). Undefined when the groups are unbalanced or yield too many alternatives.
 */
export function expandSlashBraces(pattern: string): string[] | undefined {
  const group = findSlashGroup(pattern);
  if (group === null) return [pattern];
  if (group === undefined) return undefined;
  const { start, end, options } = group;
  const out: string[] = [];
  for (const option of options) {
    const more = expandSlashBraces(pattern.slice(0, start) + option + pattern.slice(end + 1));
    if (more === undefined) return undefined;
    out.push(...more);
    if (out.length > MAX_ALTERNATIVES) return undefined;
  }
  return out;
}

/** The first top-level brace group holding a `/`: null if none, undefined if unbalanced. */
function findSlashGroup(
  p: string,
): { start: number; end: number; options: string[] } | null | undefined {
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '\\') {
      i++;
      continue;
    }
    if (p[i] !== '{') continue;
    let depth = 0;
    let hasSlash = false;
    const cuts: number[] = [];
    let j = i;
    for (; j < p.length; j++) {
      const ch = p[j];
      if (ch === '\\') {
        j++;
        continue;
      }
      if (ch === '{') depth++;
      else if (ch === '}' && --depth === 0) break;
      else if (ch === ',' && depth === 1) cuts.push(j);
      else if (ch === '/') hasSlash = true;
    }
    if (j >= p.length) return hasSlash ? undefined : null;
    if (!hasSlash) {
      i = j;
      continue;
    }
    const bounds = [i, ...cuts, j];
    const options = bounds.slice(1).map((b, k) => p.slice(bounds[k]! + 1, b));
    return { start: i, end: j, options };
  }
  return null;
}

/**
 * Whether a write of `canonical` may move a whole tree: it is a directory, or nothing is there
 * yet (a rename's destination). Only an entry known to be something else (a file) holds nothing.
 */
export async function mayHoldEntries(fs: FsView, canonical: string): Promise<boolean> {
  try {
    return (await fs.lstat(canonical)).isDirectory();
  } catch {
    return true;
  }
}

/** The path of a symlink as the last component of `path` (parent canonical), or undefined. */
export async function linkItself(fs: FsView, path: string): Promise<string | undefined> {
  const parent = dirname(path);
  if (parent === path) return undefined;
  try {
    const canonParent = await canonicalizeLoose(fs, parent);
    const self = canonParent === sep ? sep + basename(path) : canonParent + sep + basename(path);
    // Through the probe: on the real filesystem a direct call, as the canonicalization's own,
    // not a hop through libuv's thread pool whose wake-up competes with every other answer.
    return (await pathProbe(fs).lstat(self))?.isSymbolicLink() === true ? self : undefined;
  } catch {
    return undefined;
  }
}
