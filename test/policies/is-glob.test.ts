/**
 * `isGlob` answers "plain" without scanning a path that has none of the characters picomatch's
 * scanner acts on; a table of paths with each such character, alone, escaped, unbalanced and in
 * combination, gets the same answer as the policy dialect's scan (common/glob-dialect.ts), in
 * which a parenthesis is a character of a name.
 */
import t from 'tap';
import { scanGlob } from '../../common/glob-dialect.js';
import { isGlob, splitGlob } from '../../policies/expand.js';

const SPECIAL = ['*', '?', '[', ']', '{', '}', '(', ')', '!', '+', '@', '\\', ',', '.', '..'];
const SHAPES = (c: string) => [
  `/a/${c}`,
  `/a/${c}b`,
  `/a/b${c}`,
  `${c}/a`,
  `/a/\\${c}`,
  `/a/[${c}]`,
  `/a/{${c},x}`,
  `/a/{x${c}}`,
  `/a/${c}(x)`,
  `/a/(${c})`,
  `/a/x${c}${c}y/z`,
];
const PLAIN = ['/', '/a', '/home/u/.config/Code/User', '/a b/c-d_e~f', '/a/.git/hooks', '/é/丢'];

void t.test('isGlob agrees with the scan on every special character and plain paths', (t) => {
  const paths = [...PLAIN, ...SPECIAL.flatMap(SHAPES), '**/.git/hooks', '/a/{b,c}', '/a/[bc]'];
  for (const p of paths) {
    t.equal(isGlob(p), scanGlob(p).isGlob, JSON.stringify(p));
  }
  t.equal(isGlob('/a/*'), true);
  t.equal(isGlob('/a/b'), false);
  t.equal(isGlob('/a/Dropbox (Personal)'), false, 'parentheses alone are a name');
  t.equal(isGlob('/a/x|y'), false, 'so is a bar');
  t.equal(isGlob('/a/Notes {old}'), false, 'braces without a comma are a name');
  t.equal(isGlob('/a/a{b'), false, 'so is an unclosed brace');
  t.equal(isGlob('/a/P [draft'), false, 'and an unclosed bracket');
  t.equal(isGlob('/a/{b,c}'), true, 'a brace group');
  t.equal(isGlob('/a/d{1..3}'), true, 'a range');
  t.equal(isGlob('/a/[bc]'), true, 'a bracket expression');
  t.equal(isGlob('/a/\\*'), false, 'an escaped star');
  t.same(splitGlob('/w/Notes {old}/**/*.key'), { base: '/w/Notes {old}', glob: '**/*.key' });
  t.same(splitGlob('/w/a\\*b/x*'), { base: '/w/a*b', glob: 'x*' }, 'escapes undone in the base');
  t.same(splitGlob('**/.env'), { base: '/', glob: '**/.env' });
  t.end();
});
