/**
 * A view merges its entries' ordered match lists (policies/server-view.ts, match-order.ts): the
 * roots must come out as one stable sort of every match would give them. Random entries over a
 * small set of paths, so that paths repeat within an entry, across entries and in lists that
 * entries share; some sets hold surrogate pairs, whose UTF-16 order is not their UTF-8 order.
 * Each view is compared with a plain reference: every match sorted by UTF-8 order, entry order
 * among equals, folded path by path.
 */
import t from 'tap';
import type { EntryResult } from '../../policies/entry.js';
import { compareUtf8 } from '../../policies/paths.js';
import { CommonEffects, computeView, type Block } from '../../policies/server-view.js';

type Match = { canonical: string; name: string };

const PLAIN = ['/r/a', '/r/B', '/r/b', '/r/z', '/r/é', '/r/a/b', '/r/a b', '/r/ab', '/r'];
const WIDE = [...PLAIN, '/r/\u{1F600}', '/r/\uFFFD', '/r/\u{10400}x', '/r/\uE000'];

/** A small seeded generator: a failure names its seed and happens again. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 0x2c1b3c6d) + 0x6d2b79f5) >>> 0;
    return s / 2 ** 32;
  };
}

function entry(matches: Match[], readOnly: boolean, expired: boolean, n: number): EntryResult {
  const at = { file: 'p.yaml', line: n + 1, column: 1 };
  return { entry: { path: `e${n}`, pos: at, pathPos: at }, readOnly, expired, matches };
}

/** What the view must list: every active match, stably sorted, folded per path. */
function expected(entries: EntryResult[]) {
  const all: { key: string; e: number; name: string }[] = [];
  entries.forEach((e, i) => {
    if (e.expired) return;
    for (const m of e.matches) all.push({ key: m.canonical, e: i, name: m.name });
  });
  all.sort((x, y) => compareUtf8(x.key, y.key));
  const out: { path: string; name: string; readOnly: boolean; n: number }[] = [];
  for (let i = 0; i < all.length;) {
    let end = i;
    while (end < all.length && all[end]!.key === all[i]!.key) end++;
    const group = all.slice(i, end);
    const firstEntry = group[0]!.e;
    const names = group.filter((g) => g.e === firstEntry).map((g) => g.name);
    out.push({
      path: all[i]!.key,
      name: names.reduce((a, b) => (compareUtf8(b, a) < 0 ? b : a)),
      readOnly: group.every((g) => entries[g.e]!.readOnly),
      n: group.length,
    });
    i = end;
  }
  return out;
}

void t.test('a view lists what a stable sort of every match gives', (t) => {
  let compared = 0;
  for (let seed = 1; seed <= 400; seed++) {
    const rnd = random(seed);
    const pick = <T>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const pool = seed % 3 === 0 ? WIDE : PLAIN;
    const lists: Match[][] = [];
    const entries: EntryResult[] = [];
    // Now and then many entries: the merge keeps its lists in a heap.
    const count = 1 + Math.floor(rnd() * (seed % 5 === 0 ? 60 : 8));
    for (let i = 0; i < count; i++) {
      // An entry shares an earlier entry's list now and then, as entries naming one glob do.
      let matches: Match[];
      if (lists.length > 0 && rnd() < 0.25) matches = pick(lists);
      else {
        matches = Array.from({ length: Math.floor(rnd() * 7) }, () => ({
          canonical: pick(pool),
          name: pick(['n1', 'n2', 'N', 'é']),
        }));
        lists.push(matches);
      }
      entries.push(entry(matches, rnd() < 0.4, rnd() < 0.1, i));
    }
    const half = Math.floor(rnd() * (entries.length + 1));
    const blocks = [entries.slice(0, half), entries.slice(half)].map(
      (es) => ({ entries: es, denies: [] }) as unknown as Block,
    );
    const view = computeView(blocks, {
      globalDenies: [],
      protectedList: [],
      common: new CommonEffects([], undefined),
    });
    const got = view.info.map((i) => ({
      path: i.canonical,
      name: i.root.name,
      readOnly: i.readOnly,
      n: view.counts.get(i.canonical) ?? 1,
    }));
    const want = expected(entries);
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      t.same(got, want, `seed ${seed}: the view's roots`);
      t.end();
      return;
    }
    compared += want.length;
  }
  t.ok(compared > 1000, `400 views compared, ${compared} roots in all`);
  t.end();
});
