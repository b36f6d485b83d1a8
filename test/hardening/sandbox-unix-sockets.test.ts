/**
 * Unix sockets between sandboxed servers (common/seccomp-filter.ts). **Was a hole, found by an
 * attacker pass:** server `a`, granted a directory, opened it and handed the descriptor over an
 * abstract Unix socket (shared with the network) or one named in a root both servers see, to
 * sandboxed server `b`, which was never granted it. After `rootsctl revoke` (or the grant's
 * expiry) `a` was restarted without the mount, but `b` kept reading and writing the directory
 * through the descriptor, and could hand it back to `a`'s next instance. Now `socket(AF_UNIX)`
 * is refused in the sandbox, so no such socket can be made or reached, and so is a datagram
 * socketpair (whose end the next pass disconnected and bound to a name); a stream socketpair (a
 * pipe between a server's own processes) still works, and `sandbox.unixSockets: true` lets a server
 * have them, which the last rows use to show that the descriptor's passing is real (and that
 * the daemon's socket stays out of reach, hidden by the mounts).
 *
 * Real daemon, real proxies under bubblewrap, the hostile fixture's shell, the system's Python.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { startHostile } from '../helpers/proxied-server.js';
import { ownedShortDir } from '../helpers/proxy.js';

/** Python that binds `sys.argv[1]` (a leading `@` for an abstract name) and hands `argv[2]` on. */
const GIVER = `
import socket, os, array, sys
name = sys.argv[1].replace('@', '\\0', 1)
d = os.open(sys.argv[2], os.O_RDONLY | os.O_DIRECTORY)
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
except OSError as e:
    print('socket:', e.strerror); sys.exit(0)
s.bind(name); s.listen(1); print('listening', flush=True)
if os.fork() == 0:
    c, _ = s.accept()
    c.sendmsg([b'x'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [d]))])
`;
/** Python that takes a descriptor from `sys.argv[1]` and lists what it leads to. */
const TAKER = `
import socket, os, array, sys
name = sys.argv[1].replace('@', '\\0', 1)
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(name)
except OSError as e:
    print('socket:', e.strerror); sys.exit(0)
_, anc, _, _ = s.recvmsg(1, socket.CMSG_LEN(4))
d = array.array('i', anc[0][2][:4])[0]
print('took', sorted(os.listdir(d)))
`;
const PAIR = `
import socket
a, b = socket.socketpair(); a.send(b'pair'); print(b.recv(4).decode())
try:
    socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
except OSError as e:
    print('datagram pair:', e.strerror)
`;

void t.test('sandboxed servers cannot pass descriptors over Unix sockets', async (t) => {
  const dir = ownedShortDir(t);
  const paths = Object.fromEntries(
    ['a', 'b', 'c', 'd', 'g', 'shared'].map((n) => [n, join(dir, n)]),
  );
  for (const p of Object.values(paths)) mkdirSync(p);
  writeFileSync(join(paths.g!, 'secret.txt'), 'only a may read this');
  for (const k of ['a', 'c']) writeFileSync(join(paths[k]!, 'giver.py'), GIVER);
  for (const k of ['b', 'd']) writeFileSync(join(paths[k]!, 'taker.py'), TAKER);
  writeFileSync(join(paths.a!, 'pair.py'), PAIR);
  const block = (name: string, sandbox: string, more = '') =>
    `  ${name}:\n    roots:\n      - path: ${paths[name]}\n${more}    sandbox: ${sandbox}\n`;
  // `a` and `b` share a root too, where a named socket could be made; `c` and `d` may have
  // Unix sockets, and `c` is given `g` as `a` is.
  const shared = `      - path: ${paths.shared}\n`;
  const policy =
    `version: 1\nservers:\n` +
    block('a', 'true', `      - path: ${paths.g}\n${shared}`) +
    block('b', 'true', shared) +
    block('c', '{unixSockets: true}', `      - path: ${paths.g}\n`) +
    block('d', '{unixSockets: true}');
  const d = await startDaemon(t, policy, { dir });
  const server = async (name: string) => {
    const s = await startHostile(t, d.socket, { server: name });
    return async (cmd: string): Promise<string> =>
      (await s.call('attempt', { action: 'shell', ref: cmd })).text;
  };
  const [a, b, c, dd] = await Promise.all(['a', 'b', 'c', 'd'].map(server));
  const py = (k: string, script: string, ...args: string[]) =>
    `/usr/bin/python3 ${join(paths[k]!, script)} ${args.join(' ')}`;
  /** The giver started in the background (it stays to hand its descriptor on), and what it said. */
  const give = (run: (cmd: string) => Promise<string>, k: string, name: string) => {
    const out = join(paths[k]!, `out-${name.replace(/\W/g, '')}`);
    return run(
      `${py(k, 'giver.py', name, paths.g!)} > ${out} 2>&1 < /dev/null & sleep 1; cat ${out}`,
    );
  };

  const abstract = `@mcp-roots-test-${process.pid}`;
  t.match(
    await give(a!, 'a', abstract),
    /socket: Operation not permitted/,
    'a cannot make an abstract socket',
  );
  const named = join(paths.shared!, 's.sock');
  t.match(
    await give(a!, 'a', named),
    /socket: Operation not permitted/,
    'nor one named in the shared root',
  );
  t.match(
    await b!(py('b', 'taker.py', abstract)),
    /socket: Operation not permitted/,
    'b cannot reach one either',
  );
  t.match(
    await a!(py('a', 'pair.py')),
    /pair/,
    "a socketpair, between a server's own processes, works",
  );
  // A datagram pair's end can be disconnected, bound to a name and sent a descriptor to from
  // another sandbox (found by the next attacker pass): refused.
  t.match(
    await a!(py('a', 'pair.py')),
    /datagram pair: Operation not permitted/,
    'a datagram socketpair is refused',
  );

  // The control: with Unix sockets allowed, the descriptor of `g` reaches `d`, never granted it.
  const control = `@mcp-roots-test-control-${process.pid}`;
  t.match(await give(c!, 'c', control), /listening/, 'c listens');
  t.match(
    await dd!(py('d', 'taker.py', control)),
    /took \['secret\.txt'\]/,
    'sandbox.unixSockets: true lets d take it',
  );
  // With Unix sockets, the daemon's socket is still not there (the mounts hide it).
  t.match(
    await dd!(py('d', 'taker.py', d.socket)),
    /socket: No such file or directory/,
    "d cannot reach the daemon's socket",
  );
});
