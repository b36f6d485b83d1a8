/**
 * A root's URI is `pathToFileURL`'s spelling of its path, also where `toUri` spells a plain path
 * itself: a table of paths at the edge of "plain" (dots, tildes, dashes, characters the URL
 * parser escapes, segments it rewrites) gives the same text both ways.
 */
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { toUri } from '../../policies/paths.js';

const PATHS = [
  '/',
  '/a',
  '/a/b.c/d-e_f~g',
  '/.hidden/x',
  '/a/..b/c.',
  '/a/.../b',
  '/~user/x~',
  '/-dash/_u',
  '/a/./b',
  '/a/../b',
  '/a/.',
  '/a/..',
  '/a//b',
  '/a/b/',
  '/a b',
  '/a%20b',
  '/a#b',
  '/a?b',
  '/a\\b',
  '/a|b',
  '/a:b',
  '/a@b',
  '/a+b',
  '/a=b,c;d',
  "/a'b",
  '/a"b',
  '/a{b}',
  '/a[b]',
  '/a^b',
  '/a`b',
  '/a<b>',
  '/é',
  '/日本',
  '/a\tb',
  '/a\nb',
  '/a\u007fb',
  '/\ud83d\ude00',
];

void t.test('toUri spells every path as pathToFileURL does', (t) => {
  for (const p of PATHS) t.equal(toUri(p), pathToFileURL(p).href, JSON.stringify(p));
  // Asked twice (the second answer is remembered).
  for (const p of PATHS) t.equal(toUri(p), pathToFileURL(p).href, `${JSON.stringify(p)} again`);
  t.end();
});
