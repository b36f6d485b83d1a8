/**
 * The policy's extra writable paths (`sandbox.write`) are writable as a root is, but the sandbox
 * held include patterns only in writable roots: a `sandbox.write` path holding the include
 * directory let a sandboxed server write a policy file there, which the daemon loads at once (the
 * server grants itself any root). Such a path is now held as a writable root is: an existing base
 * read-only, a missing one or a path inside the base where the pattern could match refused.
 *
 * Real daemon, real proxy under bubblewrap, the hostile fixture server.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { sandboxedStartRefused, startBoxedHostile } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

const INCLUDED = 'version: 1\n';

/** Server h: one read-only root `r`, the extra writable path `x`, and the include given. */
const policy = (r: string, x: string, include: string) =>
  `version: 1\ninclude: ["${include}"]\nservers:\n  h:\n    roots:\n      - path: ${r}\n        readOnly: true\n    sandbox:\n      write: [${x}]\n`;

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

void t.test('an include directory in a sandbox.write path is read-only', async (t) => {
  const dir = ownedShortDir(t);
  const r = join(dir, 'r');
  const x = join(dir, 'x');
  const incDir = join(x, 'policy.d');
  mkdirSync(r, { recursive: true });
  mkdirSync(incDir, { recursive: true });
  writeFileSync(join(incDir, 'a.yaml'), INCLUDED);
  const d = await startDaemon(t, policy(r, x, `${incDir}/*.yaml`), { dir });
  const c = await d.connect();
  const before = JSON.stringify((await c.listRoots('h')).roots.map((y) => y.uri));
  const { attempt } = await startBoxedHostile(t, d.socket);
  t.match((await attempt('write', join(x, 'notes.txt'))).text, /^ok/, 'the path is writable');

  const added = await attempt('write', join(incDir, 'zz.yaml'));
  t.match(added.text, /^EROFS/, `no new file in the include directory: ${added.text}`);
  t.notOk(existsSync(join(incDir, 'zz.yaml')), 'and none made');
  const edited = await attempt('write', join(incDir, 'a.yaml'));
  t.match(edited.text, /^EROFS/, `an included file is not changed: ${edited.text}`);
  t.equal(readFileSync(join(incDir, 'a.yaml'), 'utf8'), INCLUDED, 'it keeps its contents');
  writeFileSync(join(x, 'grant.txt'), 'version: 1\n');
  const renamed = await attempt('rename', join(x, 'grant.txt'), join(incDir, 'zz2.yaml'));
  t.equal(renamed.isError, true, `nothing is moved into a match: ${renamed.text}`);
  t.notOk(existsSync(join(incDir, 'zz2.yaml')), 'and none stands there');
  const moved = await attempt('rename', incDir, join(x, 'old.d'));
  t.equal(moved.isError, true, `the include directory is not moved away: ${moved.text}`);
  await c.reload();
  const after = JSON.stringify((await c.listRoots('h')).roots.map((y) => y.uri));
  t.equal(after, before, 'the daemon lists the same roots for the server');
});

void t.test('a missing include directory in a sandbox.write path: not started', async (t) => {
  const dir = ownedShortDir(t);
  const r = join(dir, 'r');
  const x = join(dir, 'x');
  mkdirSync(r, { recursive: true });
  mkdirSync(x, { recursive: true });
  const pattern = `${x}/policy.d/*.yaml`;
  const d = await startDaemon(t, policy(r, x, pattern), { dir });
  await sandboxedStartRefused(
    t,
    d.socket,
    new RegExp(
      `include pattern ${esc(pattern)} .*writable path ${esc(x)} \\(the policy's sandbox\\.write\\).*mkdir -p ${esc(join(x, 'policy.d'))}.*take ${esc(x)} out of the server's sandbox\\.write.*narrow the include`,
    ),
    'a missing base',
  );
});

void t.test(
  'a sandbox.write path inside the include directory, where it could match',
  async (t) => {
    const dir = ownedShortDir(t);
    const r = join(dir, 'r');
    const base = join(dir, 'w');
    const x = join(base, 'x');
    mkdirSync(r, { recursive: true });
    mkdirSync(x, { recursive: true });
    const d = await startDaemon(t, policy(r, x, `${base}/*/*.yaml`), { dir });
    await sandboxedStartRefused(
      t,
      d.socket,
      new RegExp(
        `include pattern .*/w/\\*/\\*\\.yaml .*writable path ${esc(x)} .*which lies inside ${esc(base)}; take .* out of the server's sandbox\\.write, or narrow the include`,
      ),
      'a path inside the base',
    );
  },
);

void t.test(
  'an include directory in a sandbox.write path removed while the server runs',
  async (t) => {
    const dir = ownedShortDir(t);
    const r = join(dir, 'r');
    const x = join(dir, 'x');
    const incDir = join(x, 'policy.d');
    mkdirSync(r, { recursive: true });
    mkdirSync(incDir, { recursive: true });
    const d = await startDaemon(t, policy(r, x, `${incDir}/*.yaml`), { dir });
    const { boxed, attempt } = await startBoxedHostile(t, d.socket);
    t.match((await attempt('write', join(incDir, 'zz.yaml'))).text, /^EROFS/, 'read-only at first');
    // Removed: the read-only mount goes with it, and the server could make the name again.
    rmSync(incDir, { recursive: true });
    await waitFor(
      () =>
        /the server is not started: cannot lay out the sandbox: the include pattern .*writable path/.test(
          boxed.stderr(),
        ),
      30_000,
      'the proxy stopped the server and refused to start it again',
    );
    t.notOk(existsSync(join(incDir, 'zz.yaml')), 'nothing was written');
  },
);
