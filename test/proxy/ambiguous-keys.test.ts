/** Keys another JSON reader may take for another member, found in a line's text. */
import t from 'tap';
import { ambiguousKeys, looseKey } from '../../proxy/ambiguous-keys.js';

void t.test('lines refused, and why', (t) => {
  const refused: [string, RegExp][] = [
    ['{"a":1,"a":2}', /"a" appears twice in the message/],
    ['{"a":1,"\\u0061":2}', /"a" appears twice/],
    ['{"method":"x","Method":"y"}', /"method" and "Method" in the message are one key/],
    ['{"Params":{}}', /"Params" in the message is "params"/],
    ['{"param\u017f":{}}', /is "params"/],
    ['{"method\\u0000":"x"}', /is "method"/],
    ['{"params":{"Arguments":{}}}', /"Arguments" in params is "arguments"/],
    ['{"params":{"_meta":{"progressTOKEN":1}}}', /in params._meta is "progressToken"/],
    [
      '{"params":{"arguments":{"x":[{"kind":1,"\u212Aind":2}]}}}',
      /in params.arguments.x\[\] are one key/,
    ],
    ['{"params":{"arguments":{"a\\ud800":1,"a\\udc00":2}}}', /are one key/],
  ];
  for (const [text, why] of refused) t.match(ambiguousKeys(text), why, text);
  t.end();
});

void t.test('lines let through', (t) => {
  const fine = [
    '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"Name":1}}}',
    '{"a":"\\"a\\":1,\\"a\\":2","b":["a","a"]}',
    '{"x":[{"a":1},{"a":2}]}',
    '{"a":"\\\\","A\\\\":1}',
    '{"straße":1,"strasse":2}',
  ];
  for (const text of fine) t.equal(ambiguousKeys(text), undefined, text);
  // Arguments are not the envelope: only the message, its params and their _meta are looked at.
  t.equal(ambiguousKeys('{"params":{"arguments":{"a":1,"A":2}}}', true), undefined);
  t.match(ambiguousKeys('{"id":1,"ID":2}', true), /one key/);
  t.end();
});

void t.test('no depth exhausts it', (t) => {
  const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
  t.equal(ambiguousKeys(`{"a":${deep},"b":1}`), undefined);
  t.match(ambiguousKeys(`{"a":${deep},"a":1}`), /twice/);
  t.end();
});

void t.test('keys folded as Go folds them', (t) => {
  t.equal(looseKey('\u017fource'), 'SOURCE');
  t.equal(looseKey('\u212Aind'), 'KIND');
  t.equal(looseKey('f\u0130le'), 'FILE');
  t.equal(looseKey('path\u0000'), 'PATH');
  t.end();
});

void t.test(
  'keys and values full of quotes and backslashes are read as JSON.parse reads them',
  (t) => {
    // Seeded: the same lines every run. Keys and values from an alphabet of what ends or escapes a
    // string (`"`, `\`), letters that fold together (a, A), a Latin-1 letter, and U+4E22 (丢, whose
    // low byte is `"`), which makes the line two-byte text.
    let seed = 0x9e3779b9;
    const next = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const alphabet = ['a', 'A', 'b', '"', '\\', '\\"', '\\\\', 'é'];
    const word = (wide: boolean) => {
      let w = '';
      for (let n = 1 + next(3); n > 0; n--) w += alphabet[next(alphabet.length)];
      return wide && next(3) === 0 ? `${w}丢` : w;
    };
    let refusedRows = 0;
    for (let row = 0; row < 3000; row++) {
      const wide = row % 2 === 1;
      const keys = Array.from({ length: 2 + next(4) }, () => word(wide));
      const text = `{${keys.map((k) => `${JSON.stringify(k)}:${JSON.stringify(word(wide))}`).join(',')}}`;
      const loose = keys.map(looseKey);
      const expected = loose.some((l, i) => loose.indexOf(l) !== i);
      const found = ambiguousKeys(text) !== undefined;
      if (found !== expected) {
        t.fail(`${text}: ${found ? 'refused' : 'let through'}, expected the other`);
        break;
      }
      if (expected) refusedRows++;
    }
    t.ok(
      refusedRows > 100 && refusedRows < 2900,
      `both kinds of line met (${refusedRows} refused)`,
    );
    t.end();
  },
);
