/**
 * An edit of the policy is pushed from the snapshot in force (entries the edit left as they were
 * keep their expansions, daemon/state.ts `fromSnapshot`), and then everything is walked again:
 * an edit still looks at the disk as it is now. The case: a deny whose way lies outside every
 * root, so no watch sees it, is re-pointed into a root by a link. Only a walk of everything
 * compiles the deny again; an edit that took the compiled deny over would keep allowing the
 * denied directory until the next rescan.
 */
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { setup, until, uri, waitForList } from '../helpers/watch-session.js';

const policyText = (dir: string, roots: string[]) =>
  `version: 1\ndeny:\n  - "${dir}/out/x/secret"\nservers:\n  fs:\n    roots:\n${roots
    .map((r) => `      - path: "${dir}/${r}"\n`)
    .join('')}`;

void t.test('an edit compiles a deny again whose unwatched way was re-pointed', async (t) => {
  const { d, c } = await setup(t, ['r/secret', 'r2', 'out/x/secret'], (dir) =>
    policyText(dir, ['r']),
  );
  writeFileSync(join(d.dir, 'r', 'secret', 'f'), 'hidden');
  const target = join(d.dir, 'r', 'secret', 'f');
  t.equal((await c.check('fs', target)).allowed, true, 'the deny names another directory');

  // `out` is outside every root and not on the way to any: nothing reports this.
  renameSync(join(d.dir, 'out', 'x'), join(d.dir, 'out', 'x-old'));
  symlinkSync(join(d.dir, 'r'), join(d.dir, 'out', 'x'));

  const edited = waitForList(c, (u) => u.includes(uri(join(d.dir, 'r2'))));
  d.writePolicy(policyText(d.dir, ['r', 'r2']));
  await edited;
  await until('the deny follows the link after the edit', async () => {
    const result = await c.check('fs', target);
    return !result.allowed && result.reason.includes('denied');
  });
  t.pass('refused');
});

void t.test("an edit's new deny and removed root are in force with its push", async (t) => {
  const { d, c } = await setup(t, ['r/sub', 'r2', 'out/x/secret'], (dir) =>
    policyText(dir, ['r', 'r2']),
  );
  mkdirSync(join(d.dir, 'r', 'sub', 'keep'), { recursive: true });
  const edited = waitForList(c, (u) => !u.includes(uri(join(d.dir, 'r2'))));
  d.writePolicy(policyText(d.dir, ['r']).replace('deny:\n', `deny:\n  - "${d.dir}/r/sub"\n`));
  await edited;
  // Asked after the push, with no wait: the edit's own resolution carries its rules.
  t.equal((await c.check('fs', join(d.dir, 'r2', 'a'))).allowed, false, 'the removed root');
  t.equal((await c.check('fs', join(d.dir, 'r', 'sub', 'keep'))).allowed, false, 'the new deny');
  t.equal((await c.check('fs', join(d.dir, 'r', 'other'))).allowed, true, 'the kept root');
});
