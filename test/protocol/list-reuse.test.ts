/**
 * A pushed list read by its difference from the last one (protocol/list-reuse.ts) must give
 * exactly what `JSON.parse` of the whole line gives, whatever changed between two lines; where
 * it cannot tell, it must decline (the connection then parses the line whole). Lines are spelled
 * as the daemon spells them, then changed at random: roots added, removed, replaced, their names
 * holding quotes, backslashes, brackets, commas and characters outside ASCII, nested deny lists,
 * and bytes changed anywhere (which may leave JSON that is not a list, or not JSON).
 */
import { isDeepStrictEqual } from 'node:util';
import t from 'tap';
import { Rng } from '../../bench/fuzz-rng.js';
import type { Root } from '../../common/types.js';
import { ListReuse, REUSE_MIN_BYTES } from '../../protocol/list-reuse.js';
import type { ListChangedParams } from '../../protocol/methods.js';

const NAMES = ['a', 'b"q', 'c\\d', '{x}', '[y]', 'z,w', 'é€😀', '\\"', '"', 'e\u0001', ' s p '];

function root(rng: Rng, i: number): Root {
  const name = `${NAMES[rng.int(0, NAMES.length - 1)]!}${i}`;
  const meta: Root['_meta'] = { 'mcp-roots/readOnly': rng.chance(0.3) };
  if (rng.chance(0.2)) {
    meta['mcp-roots/deny'] = [
      { uri: `file:///srv/${i}/.env`, access: 'all' },
      { pattern: `**/${name}`, access: 'write' },
    ];
  }
  return { uri: `file:///srv/${encodeURIComponent(name)}`, name, _meta: meta };
}

function line(server: string, revision: number, roots: Root[]): Buffer {
  const params = { server, revision, instance: 'i-1', roots };
  return Buffer.from(
    JSON.stringify({
      jsonrpc: '2.0',
      method: 'notifications/roots/list_changed',
      params,
    }),
  );
}

/** What the connection would do: reuse, or parse whole and keep. Returns the params and how. */
function read(lists: ListReuse, bytes: Buffer): { params: unknown; reused: boolean } {
  const reused = lists.take(bytes);
  if (reused !== undefined) return { params: reused, reused: true };
  let params: unknown;
  try {
    params = (JSON.parse(bytes.toString('utf8')) as { params: unknown }).params;
  } catch {
    return { params: 'invalid', reused: false };
  }
  const p = params as ListChangedParams;
  if (typeof p?.server === 'string' && Array.isArray(p.roots)) lists.keep(bytes, p);
  return { params, reused: false };
}

function expected(bytes: Buffer): unknown {
  try {
    return (JSON.parse(bytes.toString('utf8')) as { params: unknown }).params;
  } catch {
    return 'invalid';
  }
}

void t.test(
  'one root added or removed at a time: read by the difference, equal to a parse',
  (t) => {
    const rng = new Rng(1);
    const lists = new ListReuse();
    let roots = Array.from({ length: 1500 }, (_, i) => root(rng, i));
    t.ok(line('big', 0, roots).length > REUSE_MIN_BYTES, 'the list is long enough to be compared');
    let reusedCount = 0;
    for (let step = 0; step < 60; step++) {
      const at = rng.int(0, roots.length);
      if (step % 3 === 2 && roots.length > 0)
        roots = roots.toSpliced(Math.min(at, roots.length - 1), 1);
      else roots = roots.toSpliced(at, 0, root(rng, 10_000 + step));
      const bytes = line('big', step + 1, roots);
      const before = reusedCount;
      const { params, reused } = read(lists, bytes);
      if (reused) reusedCount++;
      t.ok(isDeepStrictEqual(params, expected(bytes)), `step ${step}`);
      if (step > 0) t.equal(reusedCount, before + 1, `step ${step} read by the difference`);
    }
    t.end();
  },
);

void t.test('unchanged roots are the objects of the last list', (t) => {
  const rng = new Rng(2);
  const lists = new ListReuse();
  const roots = Array.from({ length: 1200 }, (_, i) => root(rng, i));
  const first = read(lists, line('big', 1, roots)).params as ListChangedParams;
  const next = read(lists, line('big', 2, roots.toSpliced(600, 0, root(rng, 99_999))));
  t.ok(next.reused);
  const second = next.params as ListChangedParams;
  t.equal(second.roots.length, 1201);
  t.equal(second.roots[0], first.roots[0]);
  t.equal(second.roots[1200], first.roots[1199]);
  t.equal(second.revision, 2);
  t.end();
});

void t.test('random edits of the bytes: equal to a parse, or declined', (t) => {
  const rng = new Rng(3);
  let taken = 0;
  const rounds = 200;
  const roots = Array.from({ length: 1100 }, (_, i) => root(rng, i));
  const base = line('big', 1, roots);
  const text = base.toString('latin1');
  // Where roots meet (`},{`) and where the array opens and closes: the edits that could
  // mislead a reader of the difference are there.
  const joints: number[] = [text.indexOf('[{'), text.length - 3];
  for (let i = text.indexOf('},{'); i !== -1; i = text.indexOf('},{', i + 1)) joints.push(i + 1);
  for (let round = 0; round < rounds; round++) {
    const lists = new ListReuse();
    read(lists, base);
    // One to three edits: inserted, deleted or replaced bytes, near a joint or anywhere.
    let edited = base;
    const near = rng.chance(0.8);
    const at = near ? joints[rng.int(0, joints.length - 1)]! : rng.int(80, base.length - 4);
    for (let k = rng.int(1, 3); k > 0; k--) {
      const i = Math.max(0, Math.min(edited.length - 1, at + rng.int(-3, near ? 3 : 200)));
      const b = Buffer.from([',",{}[]\\ax01 9'.charCodeAt(rng.int(0, 13))]);
      const kind = rng.int(0, 2);
      const after = edited.subarray(kind === 0 ? i : i + 1);
      edited = Buffer.concat([edited.subarray(0, i), kind === 1 ? Buffer.alloc(0) : b, after]);
    }
    const { params, reused } = read(lists, edited);
    if (reused) taken++;
    t.ok(isDeepStrictEqual(params, expected(edited)), `round ${round}`);
  }
  // Both ways are exercised: edits that leave a list read by the difference, and the rest.
  t.ok(taken > 0 && taken < rounds, `${taken} of ${rounds} read by the difference`);
  t.end();
});

void t.test('edits made by hand where roots meet: equal to a parse, or declined', (t) => {
  const rng = new Rng(6);
  // Without deny lists, whose entries meet as `},{` too.
  const roots = Array.from({ length: 1000 }, (_, i) => ({
    ...root(rng, i),
    _meta: { 'mcp-roots/readOnly': false },
  }));
  const text = line('big', 2, roots).toString('utf8');
  const joint = text.indexOf('},{', text.length / 2) + 1;
  const open = text.indexOf('"roots":[') + 9;
  const close = text.length - 3;
  const q = '{"uri":"q","_meta":{}}';
  const at = (i: number, remove: number, insert: string) =>
    text.slice(0, i) + insert + text.slice(i + remove);
  const cases: [string, string, boolean][] = [
    ['a comma twice', at(joint, 0, ','), false],
    ['no comma', at(joint, 1, ''), false],
    ['a space before the comma', at(joint, 0, ' '), false],
    ['a root after the array', at(close + 1, 0, q), false],
    ['a comma after [', at(open, 0, ','), false],
    ['a root first', at(open, 0, `${q},`), true],
    ['a root in the middle', at(joint + 1, 0, `${q},`), true],
    ['a root last', at(close, 0, `,${q}`), true],
    ['the first root gone', at(open, text.indexOf('},{', open) + 2 - open, ''), true],
    [
      'the last root gone',
      at(text.lastIndexOf('},{') + 1, close - text.lastIndexOf('},{') - 1, ''),
      true,
    ],
    ['a root replaced', at(joint + 1, text.indexOf('},{', joint + 1) + 1 - joint - 1, q), true],
  ];
  for (const [what, edited, valid] of cases) {
    const lists = new ListReuse();
    read(lists, line('big', 1, roots));
    const bytes = Buffer.from(edited);
    const { params, reused } = read(lists, bytes);
    t.ok(isDeepStrictEqual(params, expected(bytes)), what);
    t.equal(reused, valid, `${what}: ${valid ? '' : 'not '}read by the difference`);
  }
  t.end();
});

void t.test('a quote escaped where the last line had none: not read as the old roots', (t) => {
  const rng = new Rng(4);
  const lists = new ListReuse();
  const roots = Array.from({ length: 1000 }, (_, i) => root(rng, i));
  read(lists, line('big', 1, roots));
  const text = line('big', 2, roots).toString('utf8');
  // The same bytes after a backslash that makes the next quote part of a string.
  const cut = text.indexOf('"name"', text.length / 2);
  for (const insert of ['\\', '"', '\\\\"', '{', ',', ']']) {
    const edited = Buffer.from(text.slice(0, cut) + insert + text.slice(cut));
    const fresh = new ListReuse();
    read(fresh, line('big', 1, roots));
    t.ok(isDeepStrictEqual(read(fresh, edited).params, expected(edited)), JSON.stringify(insert));
  }
  t.end();
});

void t.test('another header shape, short lines, another server: parsed whole', (t) => {
  const rng = new Rng(5);
  const lists = new ListReuse();
  const roots = Array.from({ length: 1000 }, (_, i) => root(rng, i));
  read(lists, line('big', 1, roots));
  const spaced = Buffer.from(
    line('big', 2, roots).toString('utf8').replace('"revision":', '"revision": '),
  );
  t.equal(lists.take(spaced), undefined, 'whitespace in the header');
  t.equal(lists.take(line('other', 2, roots)), undefined, 'no last list for that server');
  t.equal(lists.take(line('big', 2, roots.slice(0, 10))), undefined, 'a short line');
  const reordered = Buffer.from(
    JSON.stringify({
      jsonrpc: '2.0',
      method: 'notifications/roots/list_changed',
      params: { server: 'big', revision: 2, instance: 'i-1', roots, extra: [1] },
    }),
  );
  t.equal(lists.take(reordered), undefined, 'a member after the roots');
  t.end();
});
