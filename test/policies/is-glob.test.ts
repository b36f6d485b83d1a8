/**
 * `isGlob` answers "plain" without scanning a path that has none of the characters picomatch's
 * scanner acts on; a table of paths with each such character, alone, escaped, unbalanced and in
 * combination, gets the same answer as the policy dialect's scan (common/glob-dialect.ts), in
 * which a parenthesis is a character of a name.
 */
import t from 'tap';
import { scanGlob } from '../../common/glob-dialect.js';
import { GLOB_OPTIONS, isGlob } from '../../policies/expand.js';

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
    t.equal(isGlob(p), scanGlob(p, GLOB_OPTIONS).isGlob, JSON.stringify(p));
  }
  t.equal(isGlob('/a/*'), true);
  t.equal(isGlob('/a/b'), false);
  t.equal(isGlob('/a/Dropbox (Personal)'), false, 'parentheses alone are a name');
  t.equal(isGlob('/a/x|y'), false, 'so is a bar');
  t.end();
});
