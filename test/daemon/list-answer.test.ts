/**
 * A `roots/list` answer kept per list and revision (daemon/list-answer.ts) is the JSON of
 * `{roots, _meta}` byte for byte, whether it is one string (a short list) or the list's pieces (a
 * long one), with names that need escaping or take several bytes; a new revision makes a new one.
 */
import t from 'tap';
import type { Root } from '../../common/types.js';
import { ListJson } from '../../daemon/list-json.js';
import { ListAnswers, SHORT_LIST_BYTES } from '../../daemon/list-answer.js';
import { RawJson, RawJsonBytes } from '../../protocol/raw-json.js';

const NAMES = ['plain', 'with "quotes"', 'back\\slash', 'é日本', '\ud83d\ude00', 'lone \ud800'];

function roots(n: number): Root[] {
  return Array.from({ length: n }, (_, i) => ({
    uri: `file:///tmp/t/d${i}`,
    name: `${NAMES[i % NAMES.length]}${i}`,
    _meta: { 'mcp-roots/readOnly': i % 2 === 0 },
  }));
}

function bytesOf(answer: unknown): Buffer {
  if (answer instanceof RawJson) return Buffer.from(answer.json, 'utf8');
  if (answer instanceof RawJsonBytes) return Buffer.concat(answer.parts);
  throw new Error('not an answer');
}

void t.test('answers are the JSON of the list and its revision, short or long', (t) => {
  const json = new ListJson();
  const answers = new ListAnswers();
  for (const n of [0, 1, 8, 200, 5000]) {
    const list = roots(n);
    const parts = json.parts(list);
    const expected = Buffer.from(
      JSON.stringify({
        roots: list,
        _meta: { 'mcp-roots/revision': 7, 'mcp-roots/instance': 'i-1' },
      }),
      'utf8',
    );
    const answer = answers.of(parts, 7, 'i-1');
    t.ok(bytesOf(answer).equals(expected), `${n} roots: the same bytes`);
    const short = Buffer.concat(parts).length <= SHORT_LIST_BYTES;
    t.equal(answer instanceof RawJson, short, `${n} roots: one string only when short`);
    t.equal(answers.of(parts, 7, 'i-1'), answer, `${n} roots: kept for the same revision`);
    const next = answers.of(parts, 8, 'i-1');
    t.not(next, answer, `${n} roots: a new revision makes a new answer`);
    t.match(bytesOf(next).toString('utf8'), /"mcp-roots\/revision":8,/);
  }
  t.end();
});
