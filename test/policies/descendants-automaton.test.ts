/**
 * `positionDependent` runs a pattern's segments as bit states, over only a path's last names for
 * a pattern whose only `**` leads, and keeps the last path's names between calls. Each of these
 * shortcuts must decide as the plain state-set walk does, for patterns either side of the 30
 * segments a bit state holds and for paths thousands of names deep.
 */
import picomatch from 'picomatch';
import t from 'tap';
import { expandSlashBraces, positionDependent } from '../../policies/descendants.js';

const SEGMENT_GLOB = { dot: true, noextglob: true, nonegate: true } as const;

/** Each segment's matcher, compiled once: compiling them per call was most of this file's time. */
const segmentMatchers = new Map<string, (name: string) => boolean>();
function segmentMatcher(seg: string): (name: string) => boolean {
  let match = segmentMatchers.get(seg);
  if (match === undefined) segmentMatchers.set(seg, (match = picomatch(seg, SEGMENT_GLOB)));
  return match;
}

/** The walk before the bit states: a set of states, every name of the path. */
function reference(pattern: string, path: string): boolean {
  const alternatives = expandSlashBraces(pattern);
  if (alternatives === undefined) return true;
  const names = path.split('/').filter((s) => s !== '');
  return alternatives.some((alt) => {
    const segs = alt
      .split('/')
      .filter((s) => s !== '')
      .map((s) => (s.includes('**') ? undefined : segmentMatcher(s)));
    const closure = (from: number[]): Set<number> => {
      const out = new Set<number>();
      for (const i of from) {
        out.add(i);
        for (let j = i; j < segs.length && segs[j] === undefined;) out.add(++j);
      }
      return out;
    };
    const start = closure([0]);
    const floating = segs.length > 0 && segs[0] === undefined;
    let states = start;
    for (const name of names) {
      const next: number[] = [];
      for (const i of states) {
        if (i >= segs.length) continue;
        const match = segs[i];
        if (match === undefined) next.push(i);
        else if (match(name)) next.push(i + 1);
      }
      states = closure(next);
      if (states.size === 0) return false;
    }
    for (const i of states) if (i < segs.length && (!floating || !start.has(i))) return true;
    return false;
  });
}

/** A small fixed generator, so a failure names the same case on every run. */
function lcg(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s % n;
  };
}

void t.test('bit states, the window and the names cache decide as the state-set walk', (t) => {
  const pick = lcg(7);
  const segPool = ['a', 'b', '*', '**', 'a**b', '?', 'a*', '{a,b}', '{a/b,c}', 'c'];
  const namePool = ['a', 'b', 'c', 'ab', 'axb', 'd'];
  const wrong: string[] = [];
  for (let n = 0; n < 3000 && wrong.length < 5; n++) {
    const length = pick(3) === 0 ? 28 + pick(6) : 1 + pick(6);
    const segs = Array.from({ length }, () => segPool[pick(segPool.length)]!);
    if (pick(2) === 0) segs[0] = '**';
    const pattern = segs.join('/');
    for (let k = 0; k < 3; k++) {
      const depth = pick(10) === 0 ? 2000 : pick(40);
      const few = pick(2) === 0 ? 2 : namePool.length;
      const path = '/' + Array.from({ length: depth }, () => namePool[pick(few)]!).join('/');
      if (positionDependent({ pattern } as never, path) !== reference(pattern, path))
        wrong.push(`${pattern} at ${path.slice(0, 120)}`);
    }
  }
  t.same(wrong, [], 'no pattern and path decided otherwise');
  t.end();
});
