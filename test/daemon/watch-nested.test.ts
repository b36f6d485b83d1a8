/**
 * `mkdir -p` of several levels at once, faster than any watch that follows it, reaches a
 * subscriber as one notification holding everything it made: under a `**` glob (the tree watch
 * sets the new watches and reads the new subtree before reporting it), and for a plain root
 * several levels below the nearest existing directory.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { exactlyOne, policy, setup, uri, uris } from '../helpers/watch-session.js';

/** Name, roots (under the test's directory), what `mkdir -p` makes, and what must be listed. */
const CASES: [string, (dir: string) => string[], string, string[]][] = [
  ['dir/**/x, three levels down', (d) => [`${d}/r/**/x`], 'r/a/b/c/x', ['r/a/b/c/x']],
  ['dir/**, every level a root', (d) => [`${d}/r/**`], 'r/p/q/s', ['r/p', 'r/p/q', 'r/p/q/s']],
  ['dir/**/x, two matches in one subtree', (d) => [`${d}/r/**/x`], 'r/x/y/x', ['r/x', 'r/x/y/x']],
  ['a plain root three levels below what exists', (d) => [`${d}/r/a/b/c`], 'r/a/b/c', ['r/a/b/c']],
];

for (const [name, roots, made, listed] of CASES) {
  void t.test(`mkdir -p, one notification: ${name}`, async (t) => {
    const { d, c } = await setup(t, ['r'], (dir) => policy(roots(dir)));
    const seen = await exactlyOne(c, () => mkdirSync(join(d.dir, made), { recursive: true }));
    t.equal(seen.length, 1, 'one notification');
    const list = uris(seen[0]!);
    for (const p of listed) t.ok(list.includes(uri(join(d.dir, p))), `${p} listed`);
  });
}
