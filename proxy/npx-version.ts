/**
 * Which cached copy of a package the version part of an npx spec (`pkg@1.2.3`, `pkg@^1`,
 * `pkg@latest`) stands for, decided offline: a sandboxed server's npx cannot ask the registry.
 * Ranges are checked here, with npm's rules for the usual forms, rather than with the `semver`
 * package, which mcp-roots does not depend on; a form not understood is refused, never guessed.
 */

/** A version, its build metadata dropped (npm ignores it when comparing). */
export interface Version {
  main: [number, number, number];
  pre: string[];
}

export function parseVersion(v: string): Version | undefined {
  const m = /^[v=]?(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(v.trim());
  if (m === null) return undefined;
  return { main: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4]?.split('.') ?? [] };
}

/** Semver precedence: numbers in order, then a prerelease before its release. */
export function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) if (a.main[i] !== b.main[i]) return a.main[i]! - b.main[i]!;
  if (a.pre.length === 0 || b.pre.length === 0) return b.pre.length - a.pre.length;
  for (let i = 0; i < Math.max(a.pre.length, b.pre.length); i++) {
    const [x, y] = [a.pre[i], b.pre[i]];
    if (x === undefined || y === undefined) return x === undefined ? -1 : 1;
    if (x === y) continue;
    const [nx, ny] = [/^\d+$/.test(x), /^\d+$/.test(y)];
    if (nx && ny) return Number(x) - Number(y);
    if (nx !== ny) return nx ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

type Op = '<' | '<=' | '>' | '>=' | '=';
interface Comparator {
  op: Op;
  v: Version;
}

/** `1`, `1.2`, `1.x`, `1.2.3-rc.1`: the parts given (a wildcard ends them) and a prerelease. */
function partial(s: string): { parts: number[]; pre: string[] } | undefined {
  const m =
    /^[v=]?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(
      s,
    );
  if (m === null) return undefined;
  const parts: number[] = [];
  for (const p of [m[1], m[2], m[3]]) {
    if (p === undefined || !/^\d+$/.test(p)) break;
    parts.push(Number(p));
  }
  return { parts, pre: parts.length === 3 ? (m[4]?.split('.') ?? []) : [] };
}

const at = (parts: number[], pre: string[] = []): Version => ({
  main: [parts[0] ?? 0, parts[1] ?? 0, parts[2] ?? 0],
  pre,
});
/** The first version past a partial one: `1.2` gives 1.3.0, `1` gives 2.0.0. */
const past = (parts: number[]): Version =>
  at(parts.map((n, i) => (i === parts.length - 1 ? n + 1 : n)));

/** One comparator set's term as comparators, or undefined when it is not understood. */
function term(word: string): Comparator[] | undefined {
  const m = /^(<=|>=|<|>|=|~>|~|\^)?(.*)$/.exec(word)!;
  const op = m[1] ?? '';
  const p = partial(m[2]!);
  if (p === undefined) return undefined;
  const { parts, pre } = p;
  const full = parts.length === 3;
  const low = at(parts, pre);
  if (parts.length === 0) return op === '<' || op === '>' ? undefined : [];
  switch (op) {
    case '':
    case '=':
      return full ? [{ op: '=', v: low }] : [ge(low), { op: '<', v: past(parts) }];
    case '>=':
      return [ge(low)];
    case '>':
      return full ? [{ op: '>', v: low }] : [ge(past(parts))];
    case '<':
      return [{ op: '<', v: low }];
    case '<=':
      return full ? [{ op: '<=', v: low }] : [{ op: '<', v: past(parts) }];
    case '~':
    case '~>':
      return [ge(low), { op: '<', v: past(parts.slice(0, Math.min(parts.length, 2))) }];
    case '^': {
      // The leftmost part that is not zero is the one that may not change (all given, if zero).
      const keep = parts.findIndex((n) => n !== 0);
      const upto = keep === -1 ? parts.length : Math.min(keep + 1, parts.length);
      return [ge(low), { op: '<', v: past(parts.slice(0, upto)) }];
    }
  }
  return undefined;
}
const ge = (v: Version): Comparator => ({ op: '>=', v });

/** `A - B`, or terms joined by spaces, as comparators. */
function comparatorSet(text: string): Comparator[] | undefined {
  const hyphen = /^(\S+)\s+-\s+(\S+)$/.exec(text);
  if (hyphen !== null) {
    const [a, b] = [partial(hyphen[1]!), partial(hyphen[2]!)];
    if (a === undefined || b === undefined) return undefined;
    const upper: Comparator[] =
      b.parts.length === 0
        ? []
        : b.parts.length === 3
          ? [{ op: '<=', v: at(b.parts, b.pre) }]
          : [{ op: '<', v: past(b.parts) }];
    return [ge(at(a.parts, a.pre)), ...upper];
  }
  // `>= 1.2` is one term: npm allows a space after the operator.
  const words = text.replace(/(<=|>=|<|>|=|~>|~|\^)\s+/g, '$1').split(/\s+/);
  const out: Comparator[] = [];
  for (const w of words) {
    if (w === '') continue;
    const cs = term(w);
    if (cs === undefined) return undefined;
    out.push(...cs);
  }
  return out;
}

function holds(c: Comparator, v: Version): boolean {
  const d = compareVersions(v, c.v);
  return { '<': d < 0, '<=': d <= 0, '>': d > 0, '>=': d >= 0, '=': d === 0 }[c.op];
}

/**
 * A range's test, or undefined when it is not a range understood here. As npm, a prerelease is in
 * a range only when a comparator of the same set names a prerelease of the same x.y.z.
 */
export function parseRange(range: string): ((v: Version) => boolean) | undefined {
  const sets: Comparator[][] = [];
  for (const part of range.split('||')) {
    const set = comparatorSet(part.trim());
    if (set === undefined) return undefined;
    sets.push(set);
  }
  return (v) =>
    sets.some(
      (set) =>
        set.every((c) => holds(c, v)) &&
        (v.pre.length === 0 ||
          set.some((c) => c.v.pre.length > 0 && c.v.main.every((n, i) => n === v.main[i]))),
    );
}

/** What a spec's version part asks of the cache. */
export type Wanted =
  /** None given, or `latest`: the newest cached copy (the registry's latest is not known). */
  | { kind: 'newest' }
  /** An exact version or a range: the newest cached copy it allows. */
  | { kind: 'allowed'; test: (v: Version) => boolean }
  /** Another tag (`next`, `beta`): which version it names is known to the registry only. */
  | { kind: 'tag' }
  /** Not a version, range or tag (a URL, a path, `npm:` alias): not looked up. */
  | { kind: 'other' };

export function wanted(version: string | undefined): Wanted {
  if (version === undefined || version === '' || version === 'latest') return { kind: 'newest' };
  const exact = parseVersion(version);
  if (exact !== undefined) {
    return { kind: 'allowed', test: (v) => compareVersions(v, exact) === 0 };
  }
  const range = parseRange(version);
  if (range !== undefined) return { kind: 'allowed', test: range };
  // npm's tag names: what encodeURIComponent leaves alone, and not a range.
  return /^[A-Za-z][\w.-]*$/.test(version) ? { kind: 'tag' } : { kind: 'other' };
}
