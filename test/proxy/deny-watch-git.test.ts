/**
 * The deny watch's notes of git directories (proxy/deny-watch.ts, `onPlanted`), beyond what the
 * end-to-end test (test/hardening/sandbox-git-plant.test.ts) shows: a code entry made while the
 * watch was not listening (its events lost to a flood, say) is found by the next walk of the
 * roots, since the notes outlive the watches; a git directory put in place of a noted one is
 * noted afresh, not taken for the old one; and the entries a directory held at the start are
 * never handed on.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { watchedRoot } from '../helpers/deny-watch.js';

/** A git directory as git takes it, holding `config` and no other code entry. */
function gitDir(dir: string): void {
  mkdirSync(join(dir, 'objects'), { recursive: true });
  mkdirSync(join(dir, 'refs'));
  writeFileSync(join(dir, 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(dir, 'config'), '[core]\n');
}

void t.test('an entry made while nothing watched is found by the next walk', async (t) => {
  const w = await watchedRoot(t, [], (r) => gitDir(join(r, 'repo', '.git')));
  const git = join(w.r, 'repo', '.git');
  w.dw.close();
  writeFileSync(join(git, 'commondir'), '/elsewhere\n');
  mkdirSync(join(git, 'hooks'));
  await w.dw.update(w.roots);
  t.same(w.planted.sort(), [join(git, 'commondir'), join(git, 'hooks')], 'both handed on');
});

void t.test('what a noted directory held, and a directory put in its place', async (t) => {
  const w = await watchedRoot(t, [], (r) => {
    gitDir(join(r, 'a', '.git'));
    gitDir(join(r, 'b', '.git'));
  });
  // The person's `git config`: a new config renamed over the one that was there.
  writeFileSync(join(w.r, 'a', '.git', 'config.new'), '[core]\n\tbare = false\n');
  renameSync(join(w.r, 'a', '.git', 'config.new'), join(w.r, 'a', '.git', 'config'));
  // A repository cloned again in the same place: a new directory, with entries of its own (made
  // before the old one goes, so that it cannot get the old one's inode number back).
  gitDir(join(w.r, 'b', 'new.git'));
  mkdirSync(join(w.r, 'b', 'new.git', 'hooks'));
  rmSync(join(w.r, 'b', '.git'), { recursive: true });
  renameSync(join(w.r, 'b', 'new.git'), join(w.r, 'b', '.git'));
  await w.quietNow();
  w.dw.close();
  await w.dw.update(w.roots);
  t.same(w.planted, [], 'nothing handed on, by the events or by the walk after');
  // The new directory is noted as the walk found it: what appears in it later is handed on.
  writeFileSync(join(w.r, 'b', '.git', 'commondir'), '/elsewhere\n');
  await w.quietNow();
  t.same(w.planted, [join(w.r, 'b', '.git', 'commondir')], 'then an entry new to it is');
});
