/**
 * A list's JSON made from kept runs of roots (daemon/list-json.ts) is the UTF-8 of
 * `JSON.stringify` of the list, byte for byte, whatever happened to the list since the runs were
 * made: roots inserted, removed, replaced by equal-looking new objects, runs emptied, lists shrunk
 * to nothing and grown again, names that need escaping or take several bytes (and lone
 * surrogates). Two lists are `same` exactly when their JSON is. Seeded; `LIST_JSON_SEED` replays
 * a run.
 */
import t from 'tap';
import { Rng } from '../../bench/fuzz-rng.js';
import type { Root } from '../../common/types.js';
import { ListJson, sameBytes } from '../../daemon/list-json.js';

const NAMES = [
  'plain',
  'with "quotes"',
  'back\\slash',
  'tab\there',
  'é日本',
  '\ud83d\ude00',
  'lone \ud800',
  'line\u2028sep',
];

function root(rng: Rng, n: number): Root {
  return {
    uri: `file:///tmp/t/d${n}`,
    name: `${rng.pick(NAMES)}${n}`,
    _meta: { 'mcp-roots/readOnly': rng.int(0, 1) === 1 },
  };
}

void t.test('a list made from kept runs is JSON.stringify of the list', (t) => {
  const seed = Number(process.env.LIST_JSON_SEED ?? Date.now() % 1_000_000);
  t.comment(`seed ${seed} (LIST_JSON_SEED=${seed} replays it)`);
  const rng = new Rng(seed);
  const json = new ListJson();
  let next = 0;
  let list: Root[] = Array.from({ length: 3000 }, () => root(rng, next++));
  let ok = true;
  let previous: Root[] | undefined;
  for (let round = 0; round < 300 && ok; round++) {
    list = list.slice();
    const op = rng.int(0, 5);
    const at = rng.int(0, list.length);
    if (op === 0) list.splice(at, 0, root(rng, next++));
    else if (op === 1) list.splice(at, 1);
    else if (op === 2) list.splice(at, rng.int(1, 200));
    else if (op === 3 && list.length > 0) list[Math.min(at, list.length - 1)] = root(rng, next++);
    else if (op === 4) list.splice(at, 0, ...Array.from({ length: 100 }, () => root(rng, next++)));
    else if (rng.int(0, 9) === 0) list = [];
    const want = Buffer.from(JSON.stringify(list), 'utf8');
    const got = Buffer.concat(json.parts(list));
    ok = got.equals(want);
    if (!ok) t.equal(got.toString('utf8'), want.toString('utf8'), `round ${round}, op ${op}`);
    // The same list asked again is the same bytes, and its text the same text.
    if (ok) ok = Buffer.concat(json.parts(list)).equals(want);
    if (ok) ok = json.of(list) === JSON.stringify(list);
    // A copy of the list (new array, same roots) is the same; one with a root changed is not.
    if (ok) ok = json.same(list.slice(), list);
    if (ok && list.length > 0) {
      const other = list.slice();
      const k = rng.int(0, other.length - 1);
      other[k] = { ...other[k]!, name: `${other[k]!.name}x` };
      ok = !json.same(other, list) && json.same(other, other.slice());
      if (!ok) t.fail(`round ${round}: a changed root not told apart`);
    }
    if (ok && previous !== undefined)
      ok = json.same(previous, list) === (JSON.stringify(previous) === JSON.stringify(list));
    previous = list;
  }
  t.ok(ok, '300 rounds, every list exact');
  t.end();
});

/** `bytes` cut into pieces at random places (empty pieces too), as fresh buffers. */
function cut(rng: Rng, bytes: Buffer): Buffer[] {
  const pieces: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    const n = rng.int(0, Math.min(40, bytes.length - at));
    pieces.push(Buffer.from(bytes.subarray(at, at + n)));
    at += n;
  }
  return pieces;
}

void t.test('pieces are compared as the bytes they hold, however each side is cut', (t) => {
  const seed = Number(process.env.LIST_JSON_SEED ?? Date.now() % 1_000_000);
  t.comment(`seed ${seed} (LIST_JSON_SEED=${seed} replays it)`);
  const rng = new Rng(seed);
  let ok = true;
  for (let round = 0; round < 2000 && ok; round++) {
    const bytes = Buffer.from(Array.from({ length: rng.int(0, 300) }, () => rng.int(0, 3)));
    const a = cut(rng, bytes);
    // The same bytes cut elsewhere, with some pieces shared with `a` where the cuts agree.
    const b =
      rng.int(0, 1) === 0 ? cut(rng, bytes) : a.map((p) => (rng.int(0, 1) ? p : Buffer.from(p)));
    ok = sameBytes(a, b) && sameBytes(b, a);
    if (!ok) t.fail(`round ${round}: equal bytes told apart`);
    if (ok && bytes.length > 0) {
      // One byte changed (same length), or one byte more or less.
      const other = Buffer.from(bytes);
      const k = rng.int(0, other.length - 1);
      const how = rng.int(0, 2);
      let changed = other;
      if (how === 0) other[k] = (other[k]! + 1 + rng.int(0, 2)) % 4;
      else if (how === 1) changed = other.subarray(0, other.length - 1);
      else changed = Buffer.concat([other, Buffer.from([rng.int(0, 3)])]);
      const c = cut(rng, changed);
      ok = !sameBytes(a, c) && !sameBytes(c, a);
      if (!ok) t.fail(`round ${round}: bytes changed (${how}) at ${k} not told apart`);
    }
  }
  t.ok(ok, '2,000 rounds: same exactly when the bytes are');
  t.end();
});
