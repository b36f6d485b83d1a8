/**
 * Changes that narrow what a sandboxed server may write without removing any of its roots. Its
 * mounts are fixed when it starts: until the old instance exits it writes what they gave it. A
 * restart that "only adds" lets the old instance finish its calls and give its lists (up to a
 * minute here), so each of these must stop it at once instead:
 *
 * - a read-only root added inside a writable one (a policy edit, or `grant --read-only`);
 * - a protected file replaced by a rename over it (git's `config.lock`, an editor's save), which
 *   detaches its read-only mount: the restart that lays it out again.
 *
 * The server arms a write of its own a few seconds ahead, with no call in flight then; it must
 * fail or not happen. Run with --no-enforce: only the kernel answers.
 */
import { mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { startHostile, type Proxied } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

/** Whether the restart stopped the old instance at once, once the armed write has been tried. */
async function armedWriteTried(t: Test, h: Proxied): Promise<void> {
  await waitFor(() => h.stderr().includes('restarting the server:'), 30_000, 'the restart');
  await waitFor(
    () =>
      h.stderr().includes('hostile: later write') ||
      h.stderr().includes('restarted the server (ms:'),
    30_000,
    `the armed write, or the new instance\n${h.stderr()}`,
  );
  t.match(h.stderr(), 'the change takes access away: stopping the old server at once');
}

for (const how of ['a policy edit', 'a read-only grant'] as const) {
  void t.test(`a read-only root added inside a writable one, by ${how}`, async (t) => {
    const dir = ownedShortDir(t);
    const w = join(dir, 'w');
    mkdirSync(join(w, 'keep', 'vendor'), { recursive: true });
    const lib = join(w, 'keep', 'vendor', 'lib.js');
    writeFileSync(lib, 'original\n');
    const policy = (nested: boolean) =>
      `version: 1\nservers:\n  h:\n    sandbox: true\n    roots:\n      - path: ${w}/keep\n` +
      (nested ? `      - path: ${w}/keep/vendor\n        readOnly: true\n` : '');
    const d = await startDaemon(t, policy(false), { dir });
    const admin = await d.connect('admin');
    // Its lists take a minute once called: a restart that reads them keeps it that long.
    const h = await startHostile(t, d.socket, { flags: ['--slow-list=60000'] });
    const armed = await h.call('attempt', { action: 'write-later', ref: lib, to: '3000' });
    t.equal(armed.text, 'ok: armed');
    if (how === 'a policy edit') d.writePolicy(policy(true));
    else await admin.grant('h', join(w, 'keep', 'vendor'), { seconds: 600, readOnly: true });
    await armedWriteTried(t, h);
    t.equal(readFileSync(lib, 'utf8'), 'original\n', 'the old instance did not write it');
    await waitFor(() => h.stderr().includes('restarted the server (ms:'), 30_000, 'restarted');
    const again = await h.call('attempt', { action: 'write', ref: lib });
    t.match(again.text, /^EROFS/, 'read-only for the new instance');
  });
}

void t.test('a read-only root added inside a write path spelled through a link', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['keep/vendor', 'other']) mkdirSync(join(w, d), { recursive: true });
  // The person's own link, outside every root: the write path is where it leads.
  symlinkSync(join(w, 'keep'), join(w, 'keep-link'));
  const lib = join(w, 'keep', 'vendor', 'lib.js');
  writeFileSync(lib, 'original\n');
  const policy = (nested: boolean) =>
    `version: 1\nservers:\n  h:\n    sandbox:\n      write: [${w}/keep-link]\n    roots:\n      - path: ${w}/other\n` +
    (nested ? `      - path: ${w}/keep/vendor\n        readOnly: true\n` : '');
  const d = await startDaemon(t, policy(false), { dir });
  const h = await startHostile(t, d.socket, { flags: ['--slow-list=60000'] });
  const armed = await h.call('attempt', { action: 'write-later', ref: lib, to: '3000' });
  t.equal(armed.text, 'ok: armed');
  d.writePolicy(policy(true));
  await armedWriteTried(t, h);
  t.equal(readFileSync(lib, 'utf8'), 'original\n', 'the old instance did not write it');
});

void t.test('a protected file replaced by a rename: the old instance is stopped', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'keep', '.git'), { recursive: true });
  const config = join(w, 'keep', '.git', 'config');
  writeFileSync(config, '[core]\n');
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  h:\n    sandbox: true\n    roots:\n      - path: ${w}/keep\n`,
    { dir },
  );
  const h = await startHostile(t, d.socket, { flags: ['--slow-list=60000'] });
  t.match((await h.call('attempt', { action: 'write', ref: config })).text, /^EROFS/);
  const armed = await h.call('attempt', { action: 'write-later', ref: config, to: '3000' });
  t.equal(armed.text, 'ok: armed');
  // `git config ...`: git writes config.lock and renames it over config, which takes the file
  // out from under its read-only mount.
  writeFileSync(`${config}.lock`, '[core]\n[user]\n');
  renameSync(`${config}.lock`, config);
  await armedWriteTried(t, h);
  t.equal(readFileSync(config, 'utf8'), '[core]\n[user]\n', 'the old instance did not write it');
  await waitFor(() => h.stderr().includes('restarted the server (ms:'), 30_000, 'restarted');
  const again = await h.call('attempt', { action: 'write', ref: config });
  t.match(again.text, /^EROFS/, 'read-only again for the new instance');
});
