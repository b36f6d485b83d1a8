/**
 * How far up the sandbox looks for a script's package (proxy/program-bounds.ts). The nearest
 * folder above the script holding a `package.json` is shown whole, and an attacker pass found
 * such files where nobody meant a package: the home reached through a link (`/home` ->
 * `/var/home`) was not known for the home, and `~/package.json` showed all of it;
 * `npm install --prefix ~/.local` showed all of `~/.local` (the daemon's decision log, keyrings);
 * a `package.json` anyone may leave in `/tmp` showed the real `/tmp`. And a link the server
 * planted in its root chose the package of the script it leads to.
 *
 * The server is the hostile fixture in one file (its helper module inlined), so that it starts
 * with nothing of its folder shown but itself.
 */
import { chmodSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { programPaths } from '../../proxy/program.js';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, startProxied } from '../helpers/proxied-server.js';
import { ownedShortDir, real } from '../helpers/proxy.js';
import { fixtureServer } from '../helpers/repo.js';

/** The hostile server as one file at `path`. */
function oneFileServer(path: string): string {
  const helper = readFileSync(fixtureServer('parent-watch.mjs'), 'utf8').replace(/^export /m, '');
  const server = readFileSync(HOSTILE_SERVER, 'utf8').replace(
    "import { exitWhenOrphaned } from './parent-watch.mjs';",
    helper,
  );
  writeFileSync(path, server);
  return path;
}

/** The server started sandboxed from `script`, as the person whose home is `home`. */
async function boxedFrom(
  t: Test,
  dir: string,
  script: string,
  home: string,
  stateDir: string,
): Promise<(action: string, ref: string) => Promise<{ text: string; isError: boolean }>> {
  const proj = join(dir, 'proj');
  mkdirSync(proj, { recursive: true });
  writeFileSync(join(proj, 'notes.txt'), 'notes');
  const policy = `version: 1\nservers:\n  h:\n    roots:\n      - path: ${proj}\n`;
  const d = await startDaemon(t, policy, { dir, stateDir, home });
  const c = await d.connect('rootsctl');
  await c.request('roots/check', { server: 'other', path: '/very/private/thing', access: 'read' });
  const boxed = await startProxied(t, {
    server: 'h',
    socket: d.socket,
    proxyArgs: ['--sandbox', '--no-enforce'],
    command: [process.execPath, script],
    env: { HOME: home, XDG_STATE_HOME: undefined, XDG_DATA_HOME: undefined },
  });
  const attempt = (action: string, ref: string) => boxed.call('attempt', { action, ref, to: '' });
  t.match((await attempt('read', join(proj, 'notes.txt'))).text, /^ok: notes$/, 'the server is up');
  t.match(boxed.stderr(), /starting the server in its sandbox/, 'sandboxed');
  return attempt;
}

void t.test('a home reached through a link is never a package', async (t) => {
  const dir = ownedShortDir(t);
  const realHome = join(real(dir), 'var-home/u');
  mkdirSync(join(realHome, 'mcp/my-server'), { recursive: true });
  symlinkSync(join(real(dir), 'var-home'), join(dir, 'home'));
  writeFileSync(join(realHome, 'package.json'), '{"dependencies":{"left-pad":"1.3.0"}}');
  mkdirSync(join(realHome, 'Documents'));
  writeFileSync(join(realHome, 'Documents/taxes.txt'), 'HOME-SECRET');
  const script = oneFileServer(join(realHome, 'mcp/my-server/server.mjs'));
  const stateDir = join(realHome, '.local/state/mcp-roots');
  const attempt = await boxedFrom(t, dir, script, join(dir, 'home/u'), stateDir);
  const taxes = await attempt('read', join(realHome, 'Documents/taxes.txt'));
  t.notMatch(taxes.text, /HOME-SECRET/, 'the home is not shown');
  t.equal((await attempt('list', stateDir)).isError, true, "nor the daemon's state");
});

void t.test('~/.local with a package.json is not a package', async (t) => {
  const dir = ownedShortDir(t);
  const home = join(real(dir), 'home');
  const local = join(home, '.local');
  mkdirSync(join(local, 'share/my-mcp'), { recursive: true });
  writeFileSync(join(local, 'package.json'), '{"dependencies":{"left-pad":"1.3.0"}}');
  mkdirSync(join(local, 'share/keyrings'));
  writeFileSync(join(local, 'share/keyrings/login.keyring'), 'KEYRING-SECRET');
  const script = oneFileServer(join(local, 'share/my-mcp/server.mjs'));
  const stateDir = join(local, 'state/mcp-roots');
  const attempt = await boxedFrom(t, dir, script, home, stateDir);
  t.equal((await attempt('list', stateDir)).isError, true, "the daemon's state is not shown");
  const log = await attempt('read', join(stateDir, 'decisions.jsonl'));
  t.notMatch(log.text, /very\/private/, 'nor its decision log');
  const keyring = await attempt('read', join(local, 'share/keyrings/login.keyring'));
  t.notMatch(keyring.text, /KEYRING-SECRET/, 'nor the rest of ~/.local');
});

// The base directories were compared as spelled: a `~/.local` moved to another disk and linked
// back was not known for one, and all of it was shown again (an attacker pass on the above).
void t.test('~/.local reached through a link, with a package.json, is not a package', async (t) => {
  const dir = ownedShortDir(t);
  const home = join(real(dir), 'home');
  const moved = join(real(dir), 'data/u/.local');
  mkdirSync(home);
  mkdirSync(join(moved, 'share/my-mcp'), { recursive: true });
  symlinkSync(moved, join(home, '.local'));
  writeFileSync(join(moved, 'package.json'), '{"dependencies":{"left-pad":"1.3.0"}}');
  mkdirSync(join(moved, 'share/keyrings'));
  writeFileSync(join(moved, 'share/keyrings/login.keyring'), 'KEYRING-SECRET');
  const script = oneFileServer(join(moved, 'share/my-mcp/server.mjs'));
  const attempt = await boxedFrom(t, dir, script, home, join(home, '.local/state/mcp-roots'));
  const log = await attempt('read', join(moved, 'state/mcp-roots/decisions.jsonl'));
  t.notMatch(log.text, /very\/private/, "the daemon's decision log is not shown");
  const keyring = await attempt('read', join(moved, 'share/keyrings/login.keyring'));
  t.notMatch(keyring.text, /KEYRING-SECRET/, 'nor the rest of ~/.local');
});

void t.test('a folder anyone may write is not a package', async (t) => {
  const dir = ownedShortDir(t);
  const shared = join(real(dir), 'shared');
  mkdirSync(join(shared, 'my-mcp'), { recursive: true });
  chmodSync(shared, 0o1777);
  writeFileSync(join(shared, 'package.json'), '{"private":true}');
  writeFileSync(join(shared, 'krb5cc_1000'), 'TICKET-SECRET');
  const script = oneFileServer(join(shared, 'my-mcp/server.mjs'));
  const attempt = await boxedFrom(t, dir, script, join(real(dir), 'home'), join(dir, 'state'));
  const ticket = await attempt('read', join(shared, 'krb5cc_1000'));
  t.notMatch(ticket.text, /TICKET-SECRET/, 'what others left there is not shown');
});

void t.test("a planted link's target chooses no package to show", async (t) => {
  const dir = real(ownedShortDir(t));
  const own = join(dir, 'own');
  const ws = join(dir, 'workspace');
  mkdirSync(own);
  mkdirSync(join(ws, 'other-root'), { recursive: true });
  writeFileSync(join(ws, 'package.json'), '{"private":true}');
  writeFileSync(join(ws, 'other-root/evil.mjs'), 'console.log(1)');
  symlinkSync(join(ws, 'other-root/evil.mjs'), join(own, 'server.mjs'));
  const shown = await programPaths(process.execPath, [join(own, 'server.mjs')], {
    env: process.env,
    cwd: dir,
    home: join(dir, 'home'),
    serverOwn: [own],
  });
  t.notOk(shown.includes(ws), `the workspace is not shown: ${shown.join(', ')}`);
  t.ok(shown.includes(join(ws, 'other-root/evil.mjs')), 'the script alone is');
});

// A link the server put in the middle of a chain that starts outside its places (a person's
// `~/tools/server.mjs` leading into the server's root, where it replaced its file by a link to
// another project's script) chose that project all the same (an attacker pass).
void t.test('a link planted in the middle of a chain chooses no package either', async (t) => {
  const dir = real(ownedShortDir(t));
  const root = join(dir, 'proj');
  const other = join(dir, 'secret-proj');
  mkdirSync(join(root, 'dist'), { recursive: true });
  mkdirSync(other);
  mkdirSync(join(dir, 'tools'));
  writeFileSync(join(other, 'package.json'), '{"private":true}');
  writeFileSync(join(other, 'index.mjs'), 'console.log(1)');
  symlinkSync(join(root, 'dist/server.mjs'), join(dir, 'tools/server.mjs'));
  symlinkSync(join(other, 'index.mjs'), join(root, 'dist/server.mjs'));
  const shown = await programPaths(process.execPath, [join(dir, 'tools/server.mjs')], {
    env: process.env,
    cwd: dir,
    home: join(dir, 'home'),
    serverOwn: [root],
  });
  t.notOk(shown.includes(other), `the other project is not shown: ${shown.join(', ')}`);
});
