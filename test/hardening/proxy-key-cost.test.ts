/**
 * The key scan folds each key as Go's `encoding/json` matches it, one table lookup per code unit
 * (`looseKey`), so that a line of long non-ASCII or escaped keys costs about what `JSON.parse`
 * does (`npm run bench -- key-scan` measures it). Folding fast must not fold differently: the
 * table path is checked against the one-code-point-at-a-time fold (`foldEach`) for every code
 * point of the running engine's Unicode, and long keys in several scripts are still found when
 * two of them are one key to a loose reader.
 */
import t from 'tap';
import { ambiguousKeys, foldEach, looseKey } from '../../proxy/ambiguous-keys.js';

const call = (args: string): string =>
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"r","arguments":${args}}}`;

void t.test('the table fold is the per-code-point fold for every code point', (t) => {
  let differ = 0;
  const first: string[] = [];
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    // A lone surrogate stands for itself here; `é` keeps the key off the ASCII path.
    const c = cp >= 0xd800 && cp <= 0xdfff ? String.fromCharCode(cp) : String.fromCodePoint(cp);
    const key = `x${c}é`;
    if (looseKey(key) !== foldEach(key)) {
      differ++;
      if (first.length < 10) first.push(cp.toString(16));
    }
  }
  t.equal(differ, 0, `code points folded differently: ${first.join(' ')}`);
  t.end();
});

void t.test('keys mixing scripts, surrogates and NUL fold as one code point at a time', (t) => {
  const pieces = [
    'a',
    'ſ',
    'K',
    'İ',
    'ß',
    'ẞ',
    '\u1fd3',
    'Σ',
    'ς',
    '𐐀',
    '𐐨',
    '😀',
    '\u0000',
    '\ud800',
    '\udc00',
    '丢',
    'é',
    'ﬅ',
  ];
  // Every ordered pair and triple of pieces: the cases where one code point's fold meets another's.
  let n = 0;
  for (const a of pieces)
    for (const b of pieces)
      for (const c of pieces) {
        const key = a + b + c;
        if (looseKey(key) !== foldEach(key)) t.fail(JSON.stringify(key));
        n++;
      }
  t.pass(`${n} keys`);
  t.end();
});

void t.test('long keys that one loose reader reads as one are still refused', (t) => {
  const rows: [string, string, string][] = [
    ['Greek, 10,000 letters, case', 'Σσ'.repeat(5000), 'σΣ'.repeat(5000)],
    ['Deseret (astral) case', '𐐀'.repeat(5000), '𐐨'.repeat(5000)],
    ['Latin with a long s', `${'é'.repeat(9999)}s`, `${'É'.repeat(9999)}ſ`],
    ['escaped, Kelvin sign', '\\u004b'.repeat(3000), '\\u212a'.repeat(3000)],
    ['CJK then a case pair', `${'丢'.repeat(9999)}k`, `${'丢'.repeat(9999)}K`],
    ['a NUL inside', `${'é'.repeat(5000)}\\u0000x`, `${'é'.repeat(5000)}x`],
  ];
  for (const [what, a, b] of rows) {
    t.match(ambiguousKeys(call(`{"${a}":1,"${b}":2}`)) ?? '', /one key/, what);
    t.equal(ambiguousKeys(call(`{"${a}":1,"${b}x":2}`)), undefined, `${what}: two keys`);
  }
  t.end();
});
