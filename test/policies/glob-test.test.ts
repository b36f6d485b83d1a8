/**
 * `globTest` (the walk's matcher without picomatch's per-call result objects) decides as
 * picomatch's own matcher does in the policy's dialect (common/glob-dialect.ts), on globs of every shape the walk asks
 * (one segment, braces, classes, `?`, `**`, dot names, escapes) and names built to tell them
 * apart (dot names, empty, separators, the glob's own spelling, non-ASCII).
 */
import t from 'tap';
import { globMatcher } from '../../common/glob-dialect.js';
import { GLOB_OPTIONS, globTest } from '../../policies/expand.js';

const GLOBS = [
  '*',
  '*.md',
  'e*',
  'd{1,2,3}',
  '{a,b}*',
  '[ab]*',
  '[!a]*',
  '?x',
  '.*',
  '.env',
  'x*y',
  '**',
  '**/d7',
  'a/**/b',
  '*/x',
  '{a,b}/*',
  'a\\*b',
  'a*b',
  'ü*',
  '(a)',
  'a|b',
  '*(x)',
  'node_modules',
];
const NAMES = [
  '',
  'a',
  'b',
  'x',
  'ax',
  'xx',
  'xy',
  'x-y',
  'd1',
  'd2',
  'd4',
  'd{1,2,3}',
  '.env',
  '.x',
  '.',
  '..',
  'README.md',
  '.md',
  'e',
  'e100',
  'a/b',
  'a/c/b',
  'a/x',
  'b/x',
  '.a/x',
  'a/.b',
  'x/d7',
  'd7',
  'a*b',
  'aXb',
  'ü1',
  'u1',
  '(a)',
  'a\\*b',
  'node_modules',
  '*',
  '**',
];

void t.test('globTest decides as picomatch does', (t) => {
  let compared = 0;
  for (const glob of GLOBS) {
    const ours = globTest(glob);
    const theirs = globMatcher(glob, GLOB_OPTIONS);
    for (const name of NAMES) {
      if (ours(name) !== theirs(name))
        t.fail(`${JSON.stringify(glob)} on ${JSON.stringify(name)}: ${ours(name)}`);
      compared++;
    }
    // Every glob's own spelling, too (picomatch answers it before its expression).
    t.equal(ours(glob), theirs(glob), `${glob} on itself`);
  }
  t.equal(compared, GLOBS.length * NAMES.length, 'every pair compared');
  t.throws(() => globTest(''), 'an empty glob is refused, as picomatch refuses it');
  // Parentheses and bars are characters of a name, never a group or an alternation.
  t.equal(globTest('(a)')('(a)'), true);
  t.equal(globTest('(a)')('a'), false);
  t.equal(globTest('a|b')('a'), false);
  t.equal(globTest('*(x)')('q(x)'), true);
  t.equal(globTest('*(x)')('x'), false);
  t.end();
});
