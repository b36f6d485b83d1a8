/**
 * The daemon's socket inside a sandboxed server's root (a `/tmp` root where the socket lives in
 * `/tmp/mcp-roots-<uid>`, as it does without `XDG_RUNTIME_DIR`): whoever reaches it may grant any
 * server anything. The sandbox covered the socket file with `/dev/null`, but a daemon that starts
 * again (an upgrade, a crash, `systemctl --user restart`) removes its socket and binds a new one
 * at the same path: the kernel then drops, in the sandbox, the mount on the old file, and the
 * server running there connected to the new daemon. The daemon is restarted under a running
 * sandboxed server; before and after, the server tries to connect.
 */
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, startProxied } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

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
