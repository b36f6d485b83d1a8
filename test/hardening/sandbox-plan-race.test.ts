/**
 * A sandboxed server's next layout is planned only once it has exited. Planned while it still
 * ran, the layout checked paths the server could swap for links before bubblewrap bound them:
 * it made protected `.git/config` files in its writable root (a restart for each), and while the
 * restart walked a large second root, swapped each `.git` for a relative link to a read-only
 * root's `.git`. bwrap bound the planned writable pin through the link, and the new instance
 * wrote a hook into the read-only repository, which git runs as the person at their next commit.
 *
 * Run with --no-enforce: only the kernel answers.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { startHostile } from '../helpers/proxied-server.js';
import { poll } from '../helpers/poll.js';
import { ownedShortDir } from '../helpers/proxy.js';

/** Entries in the second root: its walk holds the plan open for the swap. */
const BIG = 8_000;

void t.test('links swapped in while a restart is planned are not bound', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['aro/.git/hooks', 'keep', 'keep2/big'])
    mkdirSync(join(w, d), { recursive: true });
  writeFileSync(join(w, 'aro', '.git', 'config'), '[core]\n');
  for (let i = 0; i < BIG; i++) writeFileSync(join(w, 'keep2', 'big', `f${i}`), '');
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  h:\n    sandbox: true\n    roots:\n      - path: ${w}/aro\n        readOnly: true\n      - path: ${w}/keep\n      - path: ${w}/keep2\n`,
    { dir },
  );
  const h = await startHostile(t, d.socket);
  const restarts = () => h.stderr().split('restarted the server (ms:').length - 1;
  const hook = join(w, 'aro', '.git', 'hooks', 'pre-commit');
  const writeHook = async () => (await h.call('attempt', { action: 'write', ref: hook })).text;
  t.match(await writeHook(), /^EROFS/, 'the read-only root is read-only');
  // Swaps at several delays, to land in the plan's walk whatever this machine's speed. A swap
  // made before the proxy's watch saw the protected files brings no restart; such a round is
  // spent. A layout that finds a `.git` link in the writable root refuses to start the server
  // at all (sandbox-protected-links.test.ts): the rounds end there.
  const refused = () => /is a symbolic link, and protected from writes/.test(h.stderr());
  let raced = 0;
  for (const [round, delay] of [30, 80, 150, 250, 400].entries()) {
    const before = restarts();
    await h.call('attempt', {
      action: 'swap-git-later',
      ref: join(w, 'keep', `r${round}`),
      to: '../../../aro/.git',
      n: 20,
      delay,
    });
    if (await poll(() => restarts() > before || refused(), 15_000)) raced++;
    await writeHook().catch(() => '');
    t.notOk(
      existsSync(hook),
      `round ${round} (${delay} ms): nothing written in the read-only root`,
    );
    if (refused()) break;
  }
  t.ok(raced > 0, `${raced} rounds raced a restart or its refusal`);
});
