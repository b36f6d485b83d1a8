/**
 * A parse made ahead of a load (the daemon parses an edited file during its settle window) is
 * used only for the very bytes the load reads, once: an edit after it, an invalid file, a parse
 * of another file, and a second load all give what a load without it gives.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { loadPolicySources, prepareParse } from '../../policies/load.js';
import { contextFor } from '../helpers/policy.js';

const policy = (root: string) => `version: 1\nservers:\n  fs:\n    roots: [{ path: ${root} }]\n`;
const INVALID = 'version: 1\nservers:\n  fs:\n    roots: 7\n';

/** What loading gives, as plain data (positions, paths, errors). */
async function load(file: string, dir: string) {
  const l = await loadPolicySources(file, contextFor(dir));
  return JSON.parse(JSON.stringify(l)) as unknown;
}

void t.test('a load takes a parse made ahead only for the same bytes', async (t) => {
  const dir = t.testdir({ a: {}, b: {} });
  const file = join(dir, 'mcp-roots.yaml');
  // [name, bytes parsed ahead, bytes on disk at the load]
  const rows: [string, string, string][] = [
    ['same bytes', policy(join(dir, 'a')), policy(join(dir, 'a'))],
    ['edited again after the parse', policy(join(dir, 'a')), policy(join(dir, 'b'))],
    ['parsed valid, now invalid', policy(join(dir, 'a')), INVALID],
    ['parsed invalid, now valid', INVALID, policy(join(dir, 'b'))],
    ['invalid both times', INVALID, INVALID],
    ['a prefix of what is on disk', policy(join(dir, 'a')).slice(0, 20), policy(join(dir, 'a'))],
  ];
  for (const [name, ahead, onDisk] of rows) {
    writeFileSync(file, onDisk);
    const expected = await load(file, dir);
    prepareParse(file, Buffer.from(ahead));
    t.same(await load(file, dir), expected, name);
    // Taken once: the next load parses afresh, and still agrees.
    t.same(await load(file, dir), expected, `${name}, loaded again`);
  }
});

void t.test('a parse made ahead for one file is not used for another', async (t) => {
  const dir = t.testdir({ a: {}, b: {} });
  const one = join(dir, 'one.yaml');
  const two = join(dir, 'two.yaml');
  writeFileSync(one, policy(join(dir, 'a')));
  writeFileSync(two, policy(join(dir, 'b')));
  const expected = await load(two, dir);
  prepareParse(one, Buffer.from(policy(join(dir, 'b'))));
  t.same(await load(two, dir), expected);
});
