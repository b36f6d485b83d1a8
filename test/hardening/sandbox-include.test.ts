/**
 * A sandboxed server whose writable root holds the policy's include directory writes a policy file
 * there with its own system calls, and the daemon loads it at once: the server grants itself any
 * root. The sandbox now makes an include pattern's existing base read-only, and refuses to start
 * when a match could be created in a writable root and cannot be made read-only.
 *
 * Real daemon, real proxy under bubblewrap, the hostile fixture server.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import {
  HOSTILE_SERVER,
  sandboxedStartRefused,
  startBoxedHostile,
  startProxied,
} from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

const INCLUDED = 'version: 1\n';
/** What a hostile server would write: itself a root over `path`. */
const grant = (path: string) => `version: 1\nservers:\n  h:\n    roots: [{path: ${path}}]\n`;

/** The daemon's policy: server h, one writable root `r`, and the include given. */
const policy = (r: string, include: string) =>
  `version: 1\ninclude: ["${include}"]\nservers:\n  h:\n    roots:\n      - path: ${r}\n`;

void t.test('an existing include directory in a writable root is read-only', async (t) => {
  const dir = ownedShortDir(t);
  const r = join(dir, 'w', 'r');
  const incDir = join(r, 'policy.d');
  mkdirSync(incDir, { recursive: true });
  writeFileSync(join(incDir, 'a.yaml'), INCLUDED);
  const d = await startDaemon(t, policy(r, `${incDir}/*.yaml`), { dir });
  const c = await d.connect();
  const before = JSON.stringify((await c.listRoots('h')).roots.map((x) => x.uri));
  const { attempt } = await startBoxedHostile(t, d.socket);
  t.match((await attempt('write', join(r, 'notes.yaml'))).text, /^ok/, 'the root is writable');

  // The fixture writes only a fixed text; here the policy a server would write stands ready.
  writeFileSync(join(incDir, 'grant.txt'), grant(dir));
  const renamed = await attempt('rename', join(incDir, 'grant.txt'), join(incDir, 'zz2.yaml'));
  t.match(renamed.text, /^EROFS/, `a file there is not renamed into a match: ${renamed.text}`);
  t.notOk(existsSync(join(incDir, 'zz2.yaml')), 'and none stands there');
  // What the server moved is never policy: the daemon's list for it is as it was.
  await c.reload();
  const after = JSON.stringify((await c.listRoots('h')).roots.map((x) => x.uri));
  t.equal(after, before, 'the daemon lists the same roots for the server');
  const added = await attempt('write', join(incDir, 'zz.yaml'));
  t.match(added.text, /^EROFS/, `a new file in the include directory is refused: ${added.text}`);
  t.notOk(existsSync(join(incDir, 'zz.yaml')), 'and not made');
  const edited = await attempt('write', join(incDir, 'a.yaml'));
  t.match(edited.text, /^EROFS/, `an included file is not changed: ${edited.text}`);
  t.equal(readFileSync(join(incDir, 'a.yaml'), 'utf8'), INCLUDED, 'it keeps its contents');
  const sub = await attempt('mkdir', join(incDir, 'sub'));
  t.match(sub.text, /^EROFS/, `nothing is made below it: ${sub.text}`);
  const moved = await attempt('rename', r + '/policy.d', join(r, 'old.d'));
  t.equal(moved.isError, true, `the include directory is not moved away: ${moved.text}`);
  const parent = await attempt('rename', join(dir, 'w', 'r'), join(dir, 'w', 'r2'));
  t.equal(parent.isError, true, `nor the root that holds it: ${parent.text}`);
});

void t.test(
  'a missing include directory in a writable root: the server is not started',
  async (t) => {
    const dir = ownedShortDir(t);
    const r = join(dir, 'w', 'r');
    mkdirSync(r, { recursive: true });
    const pattern = `${r}/policy.d/*.yaml`;
    const d = await startDaemon(t, policy(r, pattern), { dir });
    const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    await sandboxedStartRefused(
      t,
      d.socket,
      new RegExp(
        `include pattern ${esc(pattern)} .*writable root ${esc(r)}.*mkdir -p ${esc(join(r, 'policy.d'))}.*read-only in the policy.*narrow the include`,
      ),
      'a missing base',
    );
  },
);

void t.test('a writable root inside the include directory, where it could match', async (t) => {
  const dir = ownedShortDir(t);
  const base = join(dir, 'w');
  const r = join(base, 'r');
  mkdirSync(r, { recursive: true });
  const pattern = `${base}/*/*.yaml`;
  const d = await startDaemon(t, policy(r, pattern), { dir });
  await sandboxedStartRefused(
    t,
    d.socket,
    /include pattern .*\/w\/\*\/\*\.yaml .*writable root .*\/w\/r, which lies inside .*\/w; make .* read-only in the policy, or narrow the include/,
    'a root inside the base',
  );
});

void t.test('an include that cannot match in any writable root changes nothing', async (t) => {
  const dir = ownedShortDir(t);
  const base = join(dir, 'w');
  const r = join(base, 'r');
  mkdirSync(r, { recursive: true });
  writeFileSync(join(base, 'a.yaml'), INCLUDED);
  const d = await startDaemon(t, policy(r, `${base}/*.yaml`), { dir });
  const boxed = await startProxied(t, {
    server: 'h',
    socket: d.socket,
    proxyArgs: ['--sandbox', '--no-enforce'],
    command: [process.execPath, HOSTILE_SERVER],
  });
  const w = await boxed.call('attempt', { action: 'write', ref: join(r, 'x.yaml'), to: '' });
  t.match(w.text, /^ok/, `the server starts and writes its root as before: ${w.text}`);
});

void t.test(
  'an include directory removed while the server runs stops it until it is made again',
  async (t) => {
    const dir = ownedShortDir(t);
    const r = join(dir, 'w', 'r');
    const incDir = join(r, 'policy.d');
    mkdirSync(incDir, { recursive: true });
    const d = await startDaemon(t, policy(r, `${incDir}/*.yaml`), { dir });
    const { boxed, attempt } = await startBoxedHostile(t, d.socket);
    t.match((await attempt('write', join(incDir, 'zz.yaml'))).text, /^EROFS/, 'read-only at first');

    // The person removes it: the read-only mount in the sandbox goes with it, and the server
    // could make the name again. It is stopped, and not started while the directory is missing.
    rmSync(incDir, { recursive: true });
    await waitFor(
      () =>
        /the server is not started: cannot lay out the sandbox: the include pattern/.test(
          boxed.stderr(),
        ),
      30_000,
      'the proxy stopped the server and refused to start it again',
    );
    t.match(
      boxed.stderr(),
      /an include pattern's directory changed in the roots: .*policy\.d; stopping the server now/,
    );
    const meanwhile = await attempt('write', join(incDir, 'zz.yaml')).catch((e: Error) => ({
      text: e.message,
      isError: true,
    }));
    t.equal(meanwhile.isError, true, `no server runs meanwhile: ${meanwhile.text}`);
    t.notOk(existsSync(join(incDir, 'zz.yaml')), 'and nothing was written');

    // The person makes it again, as the message says: the server starts, the directory read-only.
    mkdirSync(incDir);
    await waitFor(
      async () =>
        /^EROFS/.test(
          (await attempt('write', join(incDir, 'zz.yaml')).catch(() => ({ text: '' }))).text,
        ),
      30_000,
      'the server runs again with the new directory read-only',
    );
    t.match((await attempt('write', join(r, 'notes.txt'))).text, /^ok/, 'and its root writable');
    t.notOk(existsSync(join(incDir, 'zz.yaml')), 'nothing was written in it');
  },
);
