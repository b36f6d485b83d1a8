/**
 * The daemon's socket inside a sandboxed server's root (a `/tmp` root where the socket lives in
 * `/tmp/mcp-roots-<uid>`, as it does without `XDG_RUNTIME_DIR`): whoever reaches it may grant any
 * server anything. The sandbox covered the socket file with `/dev/null`, but a daemon that starts
 * again (an upgrade, a crash, `systemctl --user restart`) removes its socket and binds a new one
 * at the same path: the kernel then drops, in the sandbox, the mount on the old file, and the
 * server running there connected to the new daemon. The daemon is restarted under a running
 * sandboxed server; before and after, the server tries to connect.
 */
import { copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, proxiedTransport, startProxied } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';
import { fixtureServer } from '../helpers/repo.js';

void t.test('a daemon started again is out of reach of a running sandboxed server', async (t) => {
  const dir = ownedShortDir(t);
  const policy = `version: 1
servers:
  h:
    roots:
      - path: ${dir}
`;
  const first = await startDaemon(t, policy, { dir });
  const socket = first.socket;
  t.ok(socket.startsWith(dir + '/'), 'the socket lies inside the root');
  const boxed = await startProxied(t, {
    server: 'h',
    socket,
    proxyArgs: ['--sandbox', '--no-enforce'],
    command: [process.execPath, HOSTILE_SERVER],
  });
  const connect = () => boxed.call('attempt', { action: 'connect', ref: socket });
  const before = await connect();
  t.equal(before.isError, true, `not reachable at the start: ${before.text}`);

  const starts = () => boxed.stderr().split('starting the server in its sandbox').length - 1;
  const started = starts();
  await first.close();
  const second = await startDaemon(t, undefined, { dir });
  t.equal(second.socket, socket, 'the new daemon binds the same path');
  await waitFor(
    () => boxed.stderr().split('connected to mcp-rootsd').length - 1 >= 2,
    30_000,
    'the proxy reconnected',
  );
  const after = await connect();
  t.equal(after.isError, true, `not reachable after the daemon started again: ${after.text}`);
  t.comment(`server starts meanwhile: ${starts() - started}`);
  const list = await boxed.call('attempt', { action: 'list', ref: join(socket, '..') });
  t.notMatch(list.text, /rootsd\.sock/, `the socket's directory shows no socket: ${list.text}`);
});

/** A package for the hostile server at `pkg`, so that the sandbox shows that directory. */
function serverPackage(pkg: string): string {
  mkdirSync(pkg, { recursive: true });
  for (const f of ['hostile.mjs', 'parent-watch.mjs']) copyFileSync(fixtureServer(f), join(pkg, f));
  writeFileSync(join(pkg, 'package.json'), '{"name":"srv","private":true}');
  return join(pkg, 'hostile.mjs');
}

const unixSocketsPolicy = (root: string, more = '') =>
  `version: 1\nservers:\n  h:\n    roots:\n      - path: ${root}\n${more}    sandbox:\n      unixSockets: true\n`;

// The socket was compared as given with the canonical places bound in: named through a link
// above it (a home reached by a link, `--socket ~/lnk/run/s.sock`), it was not hidden, and a
// server allowed Unix sockets granted itself /etc (an attacker pass).
void t.test("the daemon's socket named through a link is hidden too", async (t) => {
  const dir = ownedShortDir(t);
  const pkg = join(dir, 'srv');
  const server = serverPackage(pkg);
  mkdirSync(join(pkg, 'run'));
  symlinkSync(pkg, join(dir, 'lnk'));
  const socket = join(dir, 'lnk/run/s.sock');
  const proj = join(dir, 'proj');
  mkdirSync(proj);
  await startDaemon(t, unixSocketsPolicy(proj), { dir, socket });
  const boxed = await startProxied(t, {
    server: 'h',
    socket,
    proxyArgs: ['--sandbox', '--no-enforce'],
    command: [process.execPath, server],
  });
  t.match(boxed.stderr(), /starting the server in its sandbox/, 'sandboxed');
  const where = join(pkg, 'run/s.sock');
  const connect = await boxed.call('attempt', { action: 'connect', ref: where });
  t.equal(connect.isError, true, `not reachable at its canonical place: ${connect.text}`);
  const list = await boxed.call('attempt', { action: 'list', ref: join(pkg, 'run') });
  t.notMatch(list.text, /s\.sock/, `its directory shows no socket: ${list.text}`);
});

// Where something the server is shown lies in the socket's own directory, only the socket file
// can be hidden, and a restarted daemon's new socket is not: a server that may use Unix sockets
// connected to it (an attacker pass). Such a layout is refused for it, with what to do.
void t.test(
  'a socket only hidable as a file, for a server that may use Unix sockets',
  async (t) => {
    const dir = ownedShortDir(t);
    const socketDir = join(dir, 's');
    const server = serverPackage(join(socketDir, 'srv'));
    const socket = join(socketDir, 'rootsd.sock');
    const proj = join(dir, 'proj');
    mkdirSync(proj);
    const policy = unixSocketsPolicy(proj, `      - path: ${dir}\n        readOnly: true\n`);
    await startDaemon(t, policy, { dir, socket });
    const refused = proxiedTransport({
      server: 'h',
      socket,
      proxyArgs: ['--sandbox', '--no-enforce'],
      command: [process.execPath, server],
    });
    const host = new Client({ name: 'test-host', version: '0' }, { capabilities: {} });
    t.teardown(() => host.close());
    await t.rejects(
      host.connect(refused.transport),
      /socket .*rootsd\.sock lies in a directory .*give the daemon and its clients a socket elsewhere/,
      'refused, with what to do',
    );
  },
);
