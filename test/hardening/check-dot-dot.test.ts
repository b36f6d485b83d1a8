/**
 * A `..` in a path the daemon is asked about (`roots/check`, `rootsctl check`) is taken where the
 * kernel takes it: after the links before it. The check resolved `..` as text first, so
 * `rw/link/../x`, with `link` leading outside every root, was judged as `rw/x` and allowed, while
 * opening that path reads the `x` beside the link's target. The proxy refuses `..` in arguments
 * itself; this is the daemon's own answer, which a host, a script or `rootsctl check` may act on.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { rootsctl } from '../helpers/cli.js';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir } from '../helpers/proxy.js';

void t.test('roots/check takes .. after the links before it', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['rw/sub', 'out/sub']) mkdirSync(join(w, d), { recursive: true });
  writeFileSync(join(w, 'out/x'), 'outside');
  writeFileSync(join(w, 'rw/ok.txt'), 'ok');
  writeFileSync(join(w, 'rw/x'), 'inside');
  symlinkSync(join(w, 'out/sub'), join(w, 'rw/link'));
  const policy = `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${w}/rw\n`;
  const d = await startDaemon(t, policy, { dir });
  const c = await d.connect();

  for (const access of ['read', 'write'] as const) {
    const out = await c.check('fs', join(w, 'rw/link') + '/../x', access);
    t.equal(out.allowed, false, `${access} rw/link/../x (the x beside the link's target): refused`);
    t.match(out.reason, `leads to ${join(w, 'out/x')}`, 'and the reason says where it leads');
    const up = await c.check('fs', join(w, 'rw/link') + '/..', access);
    t.equal(up.allowed, false, `${access} rw/link/.. (the target's parent, not the root): refused`);
  }
  // The same `..` inside a dangling link's target: `rw/d` -> `link/../missing` is the missing
  // name beside the link's target, which a write would create outside every root.
  symlinkSync('link/../missing', join(w, 'rw/d'));
  symlinkSync('nothing/../x', join(w, 'rw/e'));
  symlinkSync('sub/../new', join(w, 'rw/f'));
  for (const path of [join(w, 'rw/d'), join(w, 'rw/d/z')]) {
    const out = await c.check('fs', path, 'write');
    t.equal(out.allowed, false, `write ${path} (a dangling link's .. after a link): refused`);
    t.match(out.reason, join(w, 'out/missing'), 'the reason says where it leads');
  }
  const missing = await c.check('fs', join(w, 'rw/e'), 'write');
  t.equal(missing.allowed, false, "a dangling link's .. after a missing name: refused");
  const inside = await c.check('fs', join(w, 'rw/f'), 'write');
  t.equal(
    inside.allowed,
    true,
    `a dangling link's .. after a directory: allowed (${inside.reason})`,
  );
  const plain = await c.check('fs', join(w, 'rw/sub') + '/../ok.txt', 'read');
  t.equal(plain.allowed, true, `a .. after a plain directory is allowed: ${plain.reason}`);
  for (const [what, path] of [
    ['a missing name', join(w, 'rw/missing') + '/../ok.txt'],
    ['a file', join(w, 'rw/ok.txt') + '/../x'],
  ]) {
    const out = await c.check('fs', path!, 'read');
    t.equal(out.allowed, false, `a .. after ${what}: refused`);
    t.match(out.reason, /give the path without \.\./, 'saying what to do');
  }

  // rootsctl check joins a relative path to its directory without collapsing `..`.
  const env = { HOME: dir, XDG_RUNTIME_DIR: join(dir, 'run') };
  const cli = await rootsctl(['--socket', d.socket, 'check', 'fs', 'link/../x'], {
    env,
    cwd: join(w, 'rw'),
  });
  t.equal(cli.code, 1, `rootsctl check link/../x: not allowed (${cli.out.trim()})`);
  const ok = await rootsctl(['--socket', d.socket, 'check', 'fs', 'sub/../ok.txt'], {
    env,
    cwd: join(w, 'rw'),
  });
  t.equal(ok.code, 0, `rootsctl check sub/../ok.txt: allowed (${ok.out.trim()})`);
});
