/**
 * An include pattern whose directory is reached through a symlink: the daemon follows the name as
 * written at every load, but sent the sandbox only the resolved pattern. With the link inside a
 * writable root, the sandbox made the directory it led to read-only and left the link writable: a
 * sandboxed server pointed it at a directory of its own, and the daemon loaded the policy there
 * (the server granted itself a root). The daemon now also sends the pattern as written, and the
 * proxy refuses to start a sandboxed server while a writable root holds a link on the way to an
 * include's directory, with an error that says what to do. A link outside the writable roots
 * changes nothing.
 *
 * Real daemon, real proxy under bubblewrap, the hostile fixture server.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startDaemon, type TestDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, proxiedTransport, startBoxedHostile } from '../helpers/proxied-server.js';
import { ownedShortDir } from '../helpers/proxy.js';

/** Server h: the writable root `r`, and the include given. */
const policy = (r: string, include: string) =>
  `version: 1\ninclude: ["${include}"]\nservers:\n  h:\n    roots:\n      - path: ${r}\n`;

/** What a hostile server would have the daemon load: itself a root over `path`. */
const grant = (path: string) => `version: 1\nservers:\n  h:\n    roots: [{path: ${path}}]\n`;

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether the daemon lists `path` among h's roots. */
async function lists(d: TestDaemon, path: string): Promise<boolean> {
  const c = await d.connect();
  await c.reload();
  return (await c.listRoots('h')).roots.some((x) => x.uri.endsWith(path));
}

/**
 * Start the sandboxed server; when it starts (the hole), re-point `link` at `evil` as the server
 * would (a new link renamed over the old). Then expect that it was refused with `why`, and that
 * the daemon never lists the root the planted policy grants.
 */
async function attack(
  t: Test,
  d: TestDaemon,
  r: string,
  link: string,
  evil: string,
  granted: string,
  why: RegExp,
): Promise<void> {
  const { transport, stderr } = proxiedTransport({
    server: 'h',
    socket: d.socket,
    proxyArgs: ['--sandbox', '--no-enforce'],
    command: [process.execPath, HOSTILE_SERVER],
  });
  const client = new Client({ name: 'test-host', version: '0' });
  t.teardown(() => client.close());
  const err = await client.connect(transport).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  if (err === undefined) {
    const attempt = (action: string, ref: string, to: string) =>
      client.callTool({ name: 'attempt', arguments: { action, ref, to } });
    await attempt('symlink', join(r, 'next-link'), evil);
    const moved = await attempt('rename', join(r, 'next-link'), link);
    t.comment(`the server re-pointed ${link}: ${JSON.stringify(moved.content)}`);
  }
  t.ok(err, "the host's initialize fails: the server is not started");
  t.match(err?.message, why, 'the host is told why and what to do');
  t.match(stderr(), why, "the proxy's log says the same");
  t.notOk(await lists(d, granted), 'the daemon never lists the root a planted policy grants');
}

void t.test('a link in the writable root to an include directory in it', async (t) => {
  const dir = ownedShortDir(t);
  const r = join(dir, 'r');
  mkdirSync(join(r, 'real.d'), { recursive: true });
  mkdirSync(join(r, 'evil'));
  mkdirSync(join(dir, 'secret'));
  symlinkSync('real.d', join(r, 'inc'));
  // What the server would write in a directory of its own, ready here (the fixture writes a fixed text).
  writeFileSync(join(r, 'evil/zz.yaml'), grant(join(dir, 'secret')));
  const d = await startDaemon(t, policy(r, `${r}/inc/*.yaml`), { dir });
  await attack(
    t,
    d,
    r,
    join(r, 'inc'),
    'evil',
    '/secret',
    new RegExp(
      `include pattern ${esc(r)}/inc/\\*\\.yaml reaches its directory through the link ${esc(join(r, 'inc'))} in the server's writable root ${esc(r)}.*replace the link with the directory it leads to \\(or write the include with the path it leads to, ${esc(join(r, 'real.d'))}\\), make ${esc(r)} read-only in the policy, or narrow the include`,
    ),
  );
});

void t.test('a link in the writable root to an include directory outside it', async (t) => {
  const dir = ownedShortDir(t);
  const r = join(dir, 'r');
  mkdirSync(join(r, 'evil'), { recursive: true });
  mkdirSync(join(dir, 'etc/policy.d'), { recursive: true });
  mkdirSync(join(dir, 'secret'));
  symlinkSync(join(dir, 'etc/policy.d'), join(r, 'inc'));
  writeFileSync(join(r, 'evil/zz.yaml'), grant(join(dir, 'secret')));
  const d = await startDaemon(t, policy(r, `${r}/inc/*.yaml`), { dir });
  await attack(
    t,
    d,
    r,
    join(r, 'inc'),
    'evil',
    '/secret',
    new RegExp(`reaches its directory through the link ${esc(join(r, 'inc'))} in the server's`),
  );
});

void t.test('a link outside the writable roots changes nothing', async (t) => {
  const dir = ownedShortDir(t);
  const r = join(dir, 'r');
  mkdirSync(join(r, 'policy.d'), { recursive: true });
  symlinkSync(join(r, 'policy.d'), join(dir, 'inc'));
  const d = await startDaemon(t, policy(r, `${dir}/inc/*.yaml`), { dir });
  const { attempt } = await startBoxedHostile(t, d.socket);
  t.match((await attempt('write', join(r, 'notes.txt'))).text, /^ok/, 'the server starts');
  const added = await attempt('write', join(r, 'policy.d/zz.yaml'));
  t.match(added.text, /^EROFS/, `the directory the link leads to is read-only: ${added.text}`);
});
