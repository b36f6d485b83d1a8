/**
 * What the denies every server shares (the policy's global denies and the protected paths) do
 * to a root at a canonical path: whether one drops it, whether one makes it read-only, and
 * which of them its `_meta` lists as holes. A glob over 100,000 entries asks this of 100,000
 * siblings, so the answer is split: what a path's parent directory already decides is worked
 * out once per parent, and each path adds only what its own last segment can change (a literal
 * naming exactly it, a `**\/NAME` rule naming its last segment, the rules no split applies to).
 * The result is the one `covers` and `denyMeta` give rule by rule.
 */
import { sep } from 'node:path';
import type { DenyMeta } from '../common/types.js';
import { covers, type DenyRule } from './deny.js';
import { isInsideOrEqual, isStrictlyInside, toUri } from './paths.js';

/** The effect on one path; `kill` is the index of the dropping rule among the common ones. */
export interface Effect {
  kill?: number;
  write: boolean;
  meta: DenyMeta[];
}

/** What a parent directory decides for every path directly inside it. */
interface ParentPart {
  /** First rule (by index) covering the parent, of access `all`, and whether a `write` one does. */
  kill: number;
  write: boolean;
  /** Literal-only `inMeta` rules strictly inside the parent (holes of some of its children). */
  inside: number[];
  /** The last effect given to a child (siblings mostly share one: no object made per child). */
  last?: Effect;
}

const NONE = Number.MAX_SAFE_INTEGER;

export class EffectIndex {
  /** Rules a path's own spelling decides: a literal equal to it, a `**\/NAME` equal to its name. */
  private readonly byLiteral = new Map<string, number[]>();
  private readonly bySegment = new Map<string, number[]>();
  /** Rules asked path by path: patterns without a split, and rules for a directory itself. */
  private readonly each: number[] = [];
  /** `inMeta` pattern rules: holes decided by their base alone. */
  private readonly metaPatterns: number[] = [];
  private readonly parents = new Map<string, ParentPart>();
  /** One `_meta` list per distinct set of holes: most roots of a big glob share one. */
  private readonly metas = new Map<string, DenyMeta[]>();

  constructor(private readonly rules: DenyRule[]) {
    rules.forEach((d, i) => {
      if (d.entriesOnly) {
        // Covers only the path itself (and never counts as a hole).
        if (d.literal !== undefined) push(this.byLiteral, d.literal, i);
        if (d.match !== undefined) this.each.push(i);
        return;
      }
      if (d.literal !== undefined) push(this.byLiteral, d.literal, i);
      if (d.segment !== undefined && d.base === undefined) push(this.bySegment, d.segment, i);
      else if (d.match !== undefined) this.each.push(i);
      if (d.inMeta && d.pattern !== undefined) this.metaPatterns.push(i);
    });
  }

  /** The effect of the common rules on the canonical path `path`. */
  effect(path: string): Effect {
    if (path === sep) return this.slow(path);
    const cut = path.lastIndexOf(sep);
    const parentPath = cut === 0 ? sep : path.slice(0, cut);
    const name = path.slice(cut + 1);
    const parent = this.parent(parentPath);
    let kill = parent.kill;
    let write = parent.write;
    const hit = (i: number) => {
      const d = this.rules[i]!;
      if (d.access === 'all') {
        if (i < kill) kill = i;
      } else if (!d.entriesOnly) write = true;
    };
    for (const i of this.byLiteral.get(path) ?? []) hit(i);
    for (const i of this.bySegment.get(name) ?? []) hit(i);
    for (const i of this.each) if (covers(this.rules[i]!, path)) hit(i);
    if (kill !== NONE) return { kill, write, meta: [] };
    const meta = this.meta(path, parent);
    // Effects are never changed once made: a child equal to the last one shares its object.
    const last = parent.last;
    if (last !== undefined && last.write === write && last.meta === meta) return last;
    return (parent.last = { write, meta });
  }

  private parent(path: string): ParentPart {
    let p = this.parents.get(path);
    if (p === undefined) {
      p = { kill: NONE, write: false, inside: [] };
      this.rules.forEach((d, i) => {
        if (!d.entriesOnly && covers(d, path)) {
          if (d.access === 'all') p!.kill = Math.min(p!.kill, i);
          else p!.write = true;
        }
        if (isHoleCandidate(d) && literalIn(d, path)) p!.inside.push(i);
      });
      // Siblings of a big glob share a parent; other paths' parents are not worth keeping.
      if (this.parents.size > 4096) this.parents.clear();
      this.parents.set(path, p);
    }
    return p;
  }

  /** The `_meta` holes of a path no common rule drops, in rule order without repeats. */
  private meta(path: string, parent: ParentPart): DenyMeta[] {
    const holes: number[] = [];
    for (const i of parent.inside) if (literalIn(this.rules[i]!, path)) holes.push(i);
    for (const i of this.metaPatterns) if (holeIn(this.rules[i]!, path)) holes.push(i);
    if (holes.length > 1) holes.sort((a, b) => a - b);
    const key = holes.join(',');
    let meta = this.metas.get(key);
    if (meta === undefined) {
      meta = denyMeta(
        holes.map((i) => this.rules[i]!),
        path,
      );
      this.metas.set(key, meta);
    }
    return meta;
  }

  /** The rule-by-rule answer (for `/`, which has no parent). */
  private slow(path: string): Effect {
    const kill = this.rules.findIndex((d) => d.access === 'all' && covers(d, path));
    return {
      ...(kill >= 0 ? { kill } : {}),
      write: this.rules.some((d) => d.access === 'write' && !d.entriesOnly && covers(d, path)),
      meta: kill >= 0 ? [] : denyMeta(this.rules, path),
    };
  }
}

/** A literal-only rule that `_meta` lists when it lies strictly inside a root. */
function isHoleCandidate(d: DenyRule): boolean {
  return d.inMeta && !d.entriesOnly && d.pattern === undefined && d.literal !== undefined;
}

function push(map: Map<string, number[]>, key: string, i: number): void {
  const list = map.get(key);
  if (list) list.push(i);
  else map.set(key, [i]);
}

/** Whether a deny may match something inside a root (a hole the root cannot express). */
export function holeIn(d: DenyRule, root: string): boolean {
  if (d.pattern !== undefined) {
    return d.base === undefined || isInsideOrEqual(d.base, root) || isStrictlyInside(root, d.base);
  }
  return d.literal !== undefined && isStrictlyInside(d.literal, root);
}

/**
 * Whether the literal rule `d` lies strictly inside `root`, or a link on the way to its path as
 * written does: wherever the path leads, the root's server could replace that link, which
 * whatever reads the path by its name follows (`_meta` carries the links to the sandbox).
 */
function literalIn(d: DenyRule, root: string): boolean {
  return (
    isStrictlyInside(d.literal!, root) ||
    d.wayLinks?.some((l) => isStrictlyInside(l, root)) === true
  );
}

/** Denies that lie inside a root, as `_meta` entries. */
export function denyMeta(denies: DenyRule[], root: string): DenyMeta[] {
  const out: DenyMeta[] = [];
  const seen = new Map<string, DenyMeta>();
  for (const d of denies) {
    if (!d.inMeta || d.entriesOnly) continue;
    if (!holeIn(d, root) && !(d.literal !== undefined && literalIn(d, root))) continue;
    const m: DenyMeta =
      d.pattern !== undefined
        ? { pattern: d.pattern, access: d.access }
        : {
            uri: toUri(d.literal!),
            access: d.access,
            ...(d.wayLinks !== undefined ? { links: d.wayLinks } : {}),
          };
    const k = `${m.access}\0${'uri' in m ? m.uri : `\0${m.pattern}`}`;
    const earlier = seen.get(k);
    if (earlier === undefined) {
      seen.set(k, m);
      out.push(m);
    } else if ('uri' in earlier && 'links' in m) {
      // One path written two ways (the policy file by its own name and as given): every
      // link on the way counts.
      earlier.links = [...new Set([...(earlier.links ?? []), ...m.links!])];
    }
  }
  return out;
}
