/**
 * The binary-search lookups an access decision makes in a view's sorted roots
 * (policies/sorted-roots.ts) against the plain pass over every root they replace, on roots whose
 * paths are built to trip an ordering mistake: shared prefixes that end mid-segment (`b`, `b-c`,
 * `b.d`, `b0`: each sorts before or after `b/`), `/` itself, nested roots, names past ASCII,
 * astral names (surrogates, which UTF-16 and UTF-8 order differently), and paths no root holds.
 */
import t from 'tap';
import type { Root } from '../../common/types.js';
import type { RootEntry } from '../../policies/model.js';
import { compareUtf8, isInsideOrEqual, isStrictlyInside } from '../../policies/paths.js';
import type { RootInfo } from '../../policies/server-view.js';
import { holdingRoot, readOnlyInside } from '../../policies/sorted-roots.js';

const NAMES = ['b', 'b-c', 'b.d', 'b0', 'B', 'é', '\u{1F600}', '\uFFFD', 'b c', 'z'];

/** Every path up to three segments deep from NAMES under `/a`, and a few others. */
function paths(): string[] {
  const out = ['/', '/a', '/ab', '/a-'];
  for (const x of NAMES) {
    out.push(`/a/${x}`);
    for (const y of NAMES.slice(0, 5)) {
      out.push(`/a/${x}/${y}`);
      out.push(`/a/${x}/${y}/q`);
    }
  }
  return out;
}

function info(canonical: string, readOnly: boolean): RootInfo {
  const root: Root = {
    uri: `file://${canonical}`,
    name: canonical,
    _meta: { 'mcp-roots/readOnly': readOnly },
  };
  return { canonical, readOnly, root, rule: {} as RootEntry };
}

/** A view's roots: every `step`-th path, read-only by a second stride, sorted as views are. */
function view(all: string[], step: number, offset: number): RootInfo[] {
  const chosen = all.filter((_, i) => (i + offset) % step === 0);
  return chosen
    .map((p, i) => info(p, i % 3 === 0))
    .sort((x, y) => compareUtf8(x.canonical, y.canonical));
}

function linearHolding(roots: RootInfo[], canonical: string): RootInfo | undefined {
  let best: RootInfo | undefined;
  for (const r of roots)
    if (
      isInsideOrEqual(canonical, r.canonical) &&
      (!best || r.canonical.length > best.canonical.length)
    )
      best = r;
  return best;
}

function linearReadOnlyInside(roots: RootInfo[], canonical: string): RootInfo | undefined {
  return roots.find((r) => r.readOnly && isStrictlyInside(r.canonical, canonical));
}

void t.test('the nearest holding root and a read-only root inside: as a pass over all', (t) => {
  const all = paths();
  // Two probes far deeper than any root: only ancestors as deep as the deepest root are looked up.
  const probes = [
    ...all,
    '/a/b/zz',
    '/a/é/x',
    '/q',
    '/a/\u{1F600}/b-c/q/r',
    `/a/b/zz${'/q'.repeat(600)}`,
    `${all[all.length - 1]!}${'/d'.repeat(600)}`,
  ];
  let checked = 0;
  for (const [step, offset] of [
    [1, 0],
    [2, 0],
    [2, 1],
    [3, 1],
    [7, 3],
    [11, 5],
  ] as const) {
    const roots = view(all, step, offset);
    for (const p of probes) {
      const holding = holdingRoot(roots, p);
      if (holding !== linearHolding(roots, p))
        t.fail(`holding root of ${p} (stride ${step}/${offset})`, {
          found: holding?.canonical,
          wanted: linearHolding(roots, p)?.canonical,
        });
      // Any read-only root inside will do for the decision; both must agree on whether one is.
      const inside = readOnlyInside(roots, p);
      const wanted = linearReadOnlyInside(roots, p);
      if ((inside === undefined) !== (wanted === undefined) || (inside && !inside.readOnly))
        t.fail(`read-only root inside ${p} (stride ${step}/${offset})`, {
          found: inside?.canonical,
          wanted: wanted?.canonical,
        });
      else if (inside && !isStrictlyInside(inside.canonical, p))
        t.fail(`${inside.canonical} is not strictly inside ${p}`);
      checked++;
    }
  }
  t.equal(checked, 720, `${checked} lookups agree`);
  t.end();
});

void t.test(
  '`/` as a root holds everything; nothing is strictly inside a path no root is under',
  (t) => {
    const roots = [info('/', true), info('/a/b', true)];
    t.equal(holdingRoot(roots, '/x/y')?.canonical, '/');
    t.equal(holdingRoot(roots, '/a/b/c')?.canonical, '/a/b');
    t.equal(holdingRoot(roots, '/a/b-c')?.canonical, '/');
    t.equal(readOnlyInside(roots, '/')?.canonical, '/a/b');
    t.equal(readOnlyInside(roots, '/a'), roots[1]);
    t.equal(readOnlyInside(roots, '/a/b'), undefined, 'a root is not inside itself');
    t.equal(holdingRoot([], '/a'), undefined);
    t.end();
  },
);
