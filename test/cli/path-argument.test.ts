/**
 * A PATH on rootsctl's command line: a quoted `~/x` (which no shell expanded) is in the home
 * directory, as in the policy, not in a directory named `~` under the working directory.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { rootsctl } from '../helpers/cli.js';
import { shortDir } from '../helpers/daemon.js';

void t.test('~ in a PATH argument is the home directory', async (t) => {
  const dir = shortDir();
  const home = join(dir, 'home');
  mkdirSync(join(home, 'w'), { recursive: true });
  writeFileSync(join(home, 'w/a.txt'), 'a');
  const policy = join(dir, 'p.yaml');
  writeFileSync(policy, `version: 1\nservers:\n  fs:\n    roots:\n      - path: ~/w\n`);
  const env = { HOME: home };
  const cwd = join(dir, 'elsewhere');
  mkdirSync(cwd);
  const check = (path: string) => rootsctl(['--config', policy, 'check', 'fs', path], { env, cwd });

  const tilde = await check('~/w/a.txt');
  t.equal(tilde.code, 0, `~/w/a.txt is in the root: ${tilde.out}${tilde.err}`);
  t.match(tilde.out, join(home, 'w/a.txt'));
  const bare = await check('~');
  t.equal(bare.code, 1);
  t.match(bare.out, `${home} is outside every root`, '~ alone is the home directory');
  const relative = await check('w/a.txt');
  t.match(relative.out, join(cwd, 'w/a.txt'), 'a relative path is still the working directory’s');
  const other = await check('~root/x');
  t.equal(other.code, 2, 'a usage error');
  t.match(other.err, '~root/x: ~user is not supported; write the full path');
});
