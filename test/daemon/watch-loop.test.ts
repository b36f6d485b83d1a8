/**
 * A symlink loop on the way to the policy's files: a normal policy error (the last good policy
 * keeps serving, `status` says what is wrong), and the fix is followed by itself.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { shortDir } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';
import { exactlyOne, logCount, policy, setup, until, uri, uris } from '../helpers/watch-session.js';

void t.test('a link loop on the way to the main file, then fixed', async (t) => {
  // A dotfiles layout: `~/.config -> ../dots/cfgA`. The protected paths below `~/.config` are
  // compiled at every resolution, so the loop reaches them too, not only the policy's read.
  const dir = shortDir();
  const home = join(dir, 'home');
  for (const cfg of ['cfgA', 'cfgB']) mkdirSync(join(dir, 'dots', cfg), { recursive: true });
  mkdirSync(home);
  symlinkSync('../dots/cfgA', join(home, '.config'));
  writeFileSync(join(dir, 'dots', 'cfgB', 'mcp-roots.yaml'), policy([`${dir}/b`]));
  const configFile = join(home, '.config', 'mcp-roots.yaml');
  const { d, c, first } = await setup(t, ['a', 'b'], () => policy([`${dir}/a`]), {
    dir,
    configFile,
  });
  t.same(uris(first), [uri(join(dir, 'a'))]);

  // The loop made in one step, so that no look sees it half made (and plans the watches anew
  // from a path that still leads somewhere): `~/.config2 -> .config`, then `~/.config`
  // re-pointed to it.
  symlinkSync('.config', join(home, '.config2'));
  await waitFor(() => d.daemon.watcher.isIdle(), 30_000, 'the watcher idle');
  symlinkSync('.config2', join(home, '.config.new'));
  renameSync(join(home, '.config.new'), join(home, '.config'));
  await until('the error in status', async () => (await c.status()).policy.errors.length > 0);
  const [error] = (await c.status()).policy.errors;
  t.match(error, { file: configFile, line: 1, column: 1, message: /symlink loop.*ELOOP/ });
  t.notMatch(error!.message, /permissions/, 'no advice that does not apply');
  t.same(uris(await c.listRoots('fs')), [uri(join(dir, 'a'))], 'the last good policy serves');

  const seen = await exactlyOne(c, () => {
    rmSync(join(home, '.config2'));
    symlinkSync('../dots/cfgB', join(home, '.config2'));
  });
  t.same(uris(seen[0]!), [uri(join(dir, 'b'))], 'the fix is followed by itself');
  t.same((await c.status()).policy.errors, [], 'and the error cleared');
  t.equal(logCount(d, 'internal error'), 0, 'never an internal error');
});

void t.test(
  "a link loop at an include glob's directory: a warning, then the fix loads",
  async (t) => {
    const { d, c, first } = await setup(t, ['a', 'b', 'inc'], (dir) => {
      writeFileSync(join(dir, 'inc', 'x.yaml'), policy([`${dir}/b`]));
      symlinkSync('conf.d', join(dir, 'conf.e'));
      return policy([`${dir}/a`], 'include: ["conf.d/*.yaml"]\n');
    });
    t.same(uris(first), [uri(join(d.dir, 'a'))]);
    // Missing, the directory is no mistake (a glob may match nothing yet); a loop is one, and
    // looked the same as a missing directory, so that nothing was reloaded or said.
    const loop = async () =>
      (await c.status()).policy.warnings.filter((w) => /symlink loop/.test(w.message));
    // Once the watches are planned for the include: a link made before is not seen as its own.
    await waitFor(() => d.daemon.watcher.isIdle(), 30_000, 'the watcher idle');
    symlinkSync('conf.e', join(d.dir, 'conf.d'));
    await until('the warning in status', async () => (await loop()).length > 0);
    t.match((await loop())[0], { file: d.config, line: 2, message: /conf\.d leads through/ });

    const seen = await exactlyOne(c, () => {
      symlinkSync('inc', join(d.dir, 'conf.e.new'));
      renameSync(join(d.dir, 'conf.e.new'), join(d.dir, 'conf.e'));
    });
    t.same(uris(seen[0]!), [uri(join(d.dir, 'a')), uri(join(d.dir, 'b'))], 'the fix loads');
    t.same(await loop(), [], 'and the warning is gone');
  },
);
