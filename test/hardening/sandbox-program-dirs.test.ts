/**
 * What a sandboxed server's own program shows (proxy/program.ts, proxy/sandbox-mounts.ts), from
 * an attacker pass: a Node unpacked into ~/.local showed the whole of ~/.local (the daemon's
 * state and decision log, keyrings), where it needs only its `lib/node_modules`; the daemon's
 * socket lying in a program's directory was not hidden (only those in roots and extra paths
 * were), and a server connected to it and granted itself a root; and a script in a workspace
 * showed the workspace with none of the policy's denies over it (other projects' `.env`).
 */
import { chmodSync, copyFileSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, startBoxedHostile } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';
import { fixtureServer } from '../helpers/repo.js';

/** A project `proj` with a file, and a policy giving server `h` it (and `more` lines). */
function project(dir: string, more = '') {
  const proj = join(dir, 'proj');
  mkdirSync(proj);
  writeFileSync(join(proj, 'notes.txt'), 'notes');
  return { proj, policy: `version: 1\nservers:\n  h:\n    roots:\n      - path: ${proj}\n${more}` };
}

void t.test('a Node in ~/.local shows its modules, not ~/.local', async (t) => {
  const dir = ownedShortDir(t);
  const home = join(dir, 'home');
  const local = join(home, '.local');
  mkdirSync(join(local, 'bin'), { recursive: true });
  const node = join(local, 'bin', 'node');
  copyFileSync(process.execPath, node);
  chmodSync(node, 0o755);
  mkdirSync(join(local, 'lib', 'node_modules', 'npm'), { recursive: true });
  writeFileSync(join(local, 'lib', 'node_modules', 'npm', 'package.json'), '{"name":"npm"}');
  mkdirSync(join(local, 'share', 'keyrings'), { recursive: true });
  writeFileSync(join(local, 'share', 'keyrings', 'login.keyring'), 'KEYRING-SECRET');
  const { proj, policy } = project(dir);
  // The daemon's state where it is by default, $XDG_STATE_HOME/mcp-roots, below the prefix.
  const stateDir = join(local, 'state', 'mcp-roots');
  const d = await startDaemon(t, policy, { dir, stateDir, home });
  const { attempt } = await startBoxedHostile(t, d.socket, 'h', {
    command: [node, HOSTILE_SERVER],
    env: { HOME: home, XDG_STATE_HOME: undefined },
  });
  t.match((await attempt('read', join(proj, 'notes.txt'))).text, /^ok: notes$/, 'the server is up');
  t.equal((await attempt('list', stateDir)).isError, true, "the daemon's state is not shown");
  const keyring = await attempt('read', join(local, 'share', 'keyrings', 'login.keyring'));
  t.notMatch(keyring.text, /KEYRING-SECRET/, 'nor the rest of ~/.local');
  t.match(
    (await attempt('read', join(local, 'lib', 'node_modules', 'npm', 'package.json'))).text,
    /"npm"/,
    'its lib/node_modules is',
  );
});

void t.test("the daemon's socket in a program's directory is hidden", async (t) => {
  const dir = ownedShortDir(t);
  const pkg = join(dir, 'srv');
  mkdirSync(join(pkg, 'run'), { recursive: true });
  for (const f of ['hostile.mjs', 'parent-watch.mjs']) copyFileSync(fixtureServer(f), join(pkg, f));
  writeFileSync(join(pkg, 'package.json'), '{"name":"srv","private":true}');
  const socket = join(pkg, 'run', 's.sock');
  const { proj, policy } = project(dir, '    sandbox:\n      unixSockets: true\n');
  await startDaemon(t, policy, { dir, socket });
  const { boxed, attempt } = await startBoxedHostile(t, socket, 'h', {
    command: [process.execPath, join(pkg, 'hostile.mjs')],
  });
  t.match((await attempt('read', join(proj, 'notes.txt'))).text, /^ok: notes$/, 'the server is up');
  const connect = `require('net').connect(${JSON.stringify(socket)}).on('connect', () => { console.log('connected'); process.exit(0); }).on('error', (e) => { console.log(e.code); process.exit(0); })`;
  const out = await attempt('shell', `${process.execPath} -e ${JSON.stringify(connect)} 2>&1`);
  t.match(boxed.stderr(), /starting the server in its sandbox/, 'sandboxed');
  t.notMatch(out.text, /connected/, 'no connection to the daemon from the sandbox');
  t.match((await attempt('read', join(pkg, 'package.json'))).text, /"srv"/, 'the package is shown');
});

/** A workspace `code` whose package holds the server in `tools` and another project beside it. */
function workspace(dir: string): { code: string; tools: string; other: string } {
  const code = join(dir, 'code');
  const tools = join(code, 'tools');
  mkdirSync(tools, { recursive: true });
  for (const f of ['hostile.mjs', 'parent-watch.mjs'])
    copyFileSync(fixtureServer(f), join(tools, f));
  writeFileSync(join(code, 'package.json'), '{"name":"workspace","private":true}');
  return { code, tools, other: join(code, 'other-project') };
}

void t.test("the program's package shows the policy's denies hidden", async (t) => {
  const dir = ownedShortDir(t);
  const { tools, other } = workspace(dir);
  mkdirSync(join(other, 'secrets'), { recursive: true });
  writeFileSync(join(other, '.env'), 'API_KEY=ENV-SECRET');
  writeFileSync(join(other, 'secrets', 'id_ed25519'), 'KEY-SECRET');
  const { proj, policy } = project(
    dir,
    `    deny:\n      - "**/.env"\n      - ${join(other, 'secrets')}\n`,
  );
  const d = await startDaemon(t, policy, { dir });
  // Sandboxed by --sandbox alone: the policy gives no sandbox rule, and its denies still hold.
  const { attempt } = await startBoxedHostile(t, d.socket, 'h', {
    command: [process.execPath, join(tools, 'hostile.mjs')],
  });
  t.match((await attempt('read', join(proj, 'notes.txt'))).text, /^ok: notes$/, 'the server is up');
  t.notMatch((await attempt('read', join(other, '.env'))).text, /ENV-SECRET/, 'a denied .env');
  t.notMatch(
    (await attempt('read', join(other, 'secrets', 'id_ed25519'))).text,
    /KEY-SECRET/,
    'a denied directory',
  );
});

// The program's directories had the policy's denies hidden when the server started, and only
// then: a denied file saved later by an editor (a rename over the hidden one) or made later was
// readable (an attacker pass). They are watched as a `read` path is, and the server restarted.
void t.test("denied files appearing later in the program's package are hidden too", async (t) => {
  const dir = ownedShortDir(t);
  const { code, tools, other } = workspace(dir);
  mkdirSync(other);
  writeFileSync(join(other, '.env'), 'API_KEY=OLD-SECRET');
  const { policy } = project(dir, `    deny:\n      - "**/.env"\n      - "**/id_*"\n`);
  const d = await startDaemon(t, policy, { dir });
  const { boxed, attempt } = await startBoxedHostile(t, d.socket, 'h', {
    command: [process.execPath, join(tools, 'hostile.mjs')],
  });
  const read = async (ref: string) => (await attempt('read', ref)).text;
  t.notMatch(await read(join(other, '.env')), /SECRET/, 'hidden at the start');
  const starts = () => boxed.stderr().split('starting the server in its sandbox').length - 1;

  const before = starts();
  writeFileSync(join(other, '.env.tmp'), 'API_KEY=NEW-SECRET');
  renameSync(join(other, '.env.tmp'), join(other, '.env'));
  await waitFor(() => starts() > before, 30_000, 'the server started again');
  t.notMatch(await read(join(other, '.env')), /SECRET/, 'a denied file saved by an editor');

  const again = starts();
  writeFileSync(join(code, 'id_ed25519'), 'PRIVATE-KEY');
  await waitFor(() => starts() > again, 30_000, 'the server started again');
  t.notMatch(await read(join(code, 'id_ed25519')), /PRIVATE-KEY/, 'a denied file made later');
});
