/**
 * An include glob as a load found it (policies/load.ts `lookAtGlob`): besides the files it
 * matched, where its directory led and the links out of it it skipped. A look finding either
 * otherwise reloads, though no file a load read changed: the daemon then watches where the
 * directory leads now, and says what a fresh daemon would say of the links. In-process, looks
 * where the settle window would end (helpers/edit-state.ts); watch.test.ts has the real daemon.
 */
import { mkdirSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { editState, repoint } from '../helpers/edit-state.js';

const policy = (dir: string, roots: string[], head = '') =>
  `version: 1\n${head}servers:\n  fs:\n    roots:\n${roots
    .map((r) => `      - path: "${join(dir, r)}"\n`)
    .join('')}`;

void t.test('the glob directory a link re-pointed between two empty directories', async (t) => {
  const s = await editState(t, (dir) => {
    for (const d of ['a', 'b', 'e1', 'e2']) mkdirSync(join(dir, d));
    symlinkSync(join(dir, 'e1'), join(dir, 'conf.d'));
    return policy(dir, ['a'], 'include: ["conf.d/*.yaml"]\n');
  });
  t.equal(await s.look(), false, 'nothing to reload at start');
  repoint(join(s.dir, 'conf.d'), join(s.dir, 'e2'));
  t.equal(await s.look(), true, 're-pointed: a reload, though nothing matches either way');
  t.equal(await s.look(), false, 'then nothing more');
  writeFileSync(join(s.dir, 'e2', 'x.yaml'), policy(s.dir, ['b']));
  t.equal(await s.look(), true, 'a file where it leads now loads');
  t.same(s.roots(), [join(s.dir, 'a'), join(s.dir, 'b')]);
  repoint(join(s.dir, 'conf.d'), join(s.dir, 'e1'));
  t.equal(await s.look(), true, 'back: a reload');
  t.same(s.roots(), [join(s.dir, 'a')]);
});

void t.test('a link out of the glob directory made, then removed', async (t) => {
  const linkOut = /l\.yaml is a link out of/;
  const s = await editState(t, (dir) => {
    for (const d of ['a', 'b', 'out', 'd']) mkdirSync(join(dir, d));
    writeFileSync(join(dir, 'out', 'x.yaml'), policy(dir, ['b']));
    return policy(dir, ['a'], 'include: ["d/**/*.yaml"]\n');
  });
  t.equal(await s.look(), false, 'nothing to reload at start');
  symlinkSync(join(s.dir, 'out', 'x.yaml'), join(s.dir, 'd', 'l.yaml'));
  t.equal(await s.look(), true, 'made: a reload');
  t.match(
    s.state.warnings.map((w) => w.message),
    [linkOut],
    'the link is named, as a fresh daemon names it',
  );
  t.same(s.roots(), [join(s.dir, 'a')], 'and not loaded');
  t.equal(await s.look(), false, 'then nothing more');
  unlinkSync(join(s.dir, 'd', 'l.yaml'));
  t.equal(await s.look(), true, 'removed: a reload');
  t.notMatch(s.state.warnings.map((w) => w.message).join('\n'), linkOut, 'and no warning');
});
