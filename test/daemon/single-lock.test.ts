/**
 * The single-daemon lock's names can be read by anyone in `/proc/net/unix` and bound by anyone
 * once the daemon stops (daemon/single-lock.ts). A name held by something that is not an
 * mcp-rootsd (bound without listening, listening and silent, answering without the proof) is
 * passed over for the next generation's name, and the daemon starts, saying so; a daemon that
 * holds one proves it, and a second start is refused as before, whichever generation it holds;
 * two daemons starting at once past a squatted name still end with one; and when every name is
 * taken the daemon says what to do. The squatters are real sockets bound to the names a reader
 * of `/proc/net/unix` would have seen.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { LOCK_GENERATIONS, takeLock } from '../../daemon/single-lock.js';
import { lockName } from '../../protocol/socket-path.js';
import { shortDir } from '../helpers/short-dir.js';
import { spawnDaemon } from '../helpers/spawn-daemon.js';

const uid = process.getuid!();

function setup() {
  const dir = shortDir();
  mkdirSync(join(dir, 'run'), { mode: 0o700 });
  const config = join(dir, 'p.yaml');
  writeFileSync(config, 'version: 1\n');
  const socket = join(dir, 'run', 'rootsd.sock');
  // The token a first start makes, made here so that the test knows the names in advance.
  writeFileSync(join(dir, 'run', '.lock-token'), 'f'.repeat(32), { mode: 0o600 });
  const name = (g: number) =>
    lockName(socket, uid, g === 0 ? 'f'.repeat(32) : `${'f'.repeat(32)}\0${g}`);
  const args = ['--config', config, '--socket', socket, '--state-dir', join(dir, 'state')];
  return { dir, socket, name, args };
}

/** A squatter that listens on `name` and does `onConnection` with each connection. */
async function listening(
  t: Test,
  name: string,
  onConnection: (s: Socket) => void,
): Promise<Server> {
  const connections = new Set<Socket>();
  const server = createServer((s) => {
    connections.add(s);
    onConnection(s);
  });
  await new Promise<void>((resolve) => server.listen(name, resolve));
  t.teardown(() => {
    // A silent squatter never reads its connections' ends: closed here, or close would wait.
    for (const s of connections) s.destroy();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return server;
}

/**
 * Whether this Node binds an abstract name padded with NUL bytes to the address's full 108 bytes,
 * as `/proc/net/unix` shows it (`@` for each NUL): Node 20's libuv does, Node 22's binds the
 * name's own length. A squatter binds what it read there, so the test's must match.
 */
async function nodePadsAbstractNames(): Promise<boolean> {
  const tag = `mcp-roots-pad-probe-${process.pid}`;
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(`\0${tag}`, resolve));
  const line = readFileSync('/proc/net/unix', 'utf8')
    .split('\n')
    .find((l) => l.includes(`@${tag}`));
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return line?.includes(`@${tag}@`) ?? false;
}
const PADDED = nodePadsAbstractNames();

/** A squatter that binds `name` and never listens (the system's Python, as another program). */
async function boundOnly(t: Test, name: string): Promise<void> {
  const py = spawn(
    '/usr/bin/python3',
    [
      '-c',
      // The name as /proc/net/unix shows the daemon's: its leading NUL (which no argument can
      // hold) added here, and padded with NULs where this Node pads.
      'import socket,sys; n=b"\\0"+sys.argv[1].encode(); s=socket.socket(socket.AF_UNIX); s.bind(n+b"\\0"*(108-len(n)) if sys.argv[2]=="pad" else n); print("bound", flush=True); sys.stdin.read()',
      name.slice(1),
      (await PADDED) ? 'pad' : 'exact',
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  t.teardown(() => {
    py.kill('SIGKILL');
  });
  await new Promise<void>((resolve, reject) => {
    py.stdout.once('data', () => resolve());
    py.once('exit', (code) => reject(new Error(`the squatter exited ${code}`)));
  });
}

void t.test('squatted names are passed over, each kind with its reason', async (t) => {
  const { dir, socket, name } = setup();
  await boundOnly(t, name(0));
  await listening(t, name(1), (s) => s.end('not a proof\n'));
  // Keeps the connection open and says nothing: passed over once the proof's time is up.
  await listening(t, name(2), () => {});
  const taken = await takeLock(socket, uid, join(dir, 'run'));
  t.teardown(() => 'server' in taken && taken.server.close());
  t.ok('server' in taken, 'the lock is taken');
  if (!('server' in taken)) return;
  t.equal(taken.generation, 3, 'under the first free name');
  t.match(taken.passedOver, [
    /^lock name 0: bound by something that does not listen$/,
    /^lock name 1: its holder answered without the proof$/,
    /^lock name 2: its holder did not prove it is an mcp-rootsd within 5 s$/,
  ]);
  // A second start meets the holder's proof on its way, whatever generation it holds.
  t.same(await takeLock(socket, uid, join(dir, 'run')), { running: true }, 'a second is refused');
});

void t.test(
  "a squatter passing challenges on to another daemon's lock is passed over",
  async (t) => {
    const { dir, socket, name } = setup();
    // Another daemon's socket in the same directory: the same token, other names.
    const other = join(dir, 'run', 'other.sock');
    const running = await takeLock(other, uid, join(dir, 'run'));
    t.teardown(() => 'server' in running && running.server.close());
    t.ok('server' in running, 'the other daemon holds its lock');
    const otherName = lockName(other, uid, 'f'.repeat(32));
    await listening(t, name(0), (s) => {
      const relay = createConnection({ path: otherName });
      s.pipe(relay).pipe(s);
      relay.on('error', () => s.destroy());
      s.on('error', () => relay.destroy());
    });
    const taken = await takeLock(socket, uid, join(dir, 'run'));
    t.teardown(() => 'server' in taken && taken.server.close());
    t.ok('server' in taken, 'the lock is taken, not refused as running');
    if ('server' in taken) {
      t.same(taken.passedOver, ['lock name 0: its holder answered without the proof']);
    }
  },
);

void t.test('the daemon starts past a squatted name, and a second is refused', async (t) => {
  const { socket, name, args } = setup();
  await listening(t, name(0), (s) => s.end('not a proof\n'));
  const first = await spawnDaemon(args, { socket, t });
  t.match(
    first.stderr(),
    `the single-daemon lock for ${socket}: lock name 0: its holder answered without the proof; took the next`,
  );
  t.equal(first.child.exitCode, null, 'it runs');
  const second = await spawnDaemon(args, { socket, t });
  t.equal(await second.exited, 1, 'a second daemon exits 1');
  t.match(second.stderr(), new RegExp(`already running \\(pid ${first.child.pid}\\)`));
});

void t.test('two daemons starting at once past a squatted name: one wins', async (t) => {
  const { socket, name, args } = setup();
  await boundOnly(t, name(0));
  const [a, b] = await Promise.all([
    spawnDaemon(args, { socket, t }),
    spawnDaemon(args, { socket, t }),
  ]);
  const loser = await Promise.race([a.exited.then(() => a), b.exited.then(() => b)]);
  const winner = loser === a ? b : a;
  t.equal(loser.child.exitCode, 1, 'one exits 1');
  t.match(loser.stderr(), /already running|another mcp-rootsd holds/);
  t.equal(winner.child.exitCode, null, 'the other runs');
});

void t.test('every name taken: the daemon says what holds them and what to do', async (t) => {
  const { dir, socket, name, args } = setup();
  for (let g = 0; g < LOCK_GENERATIONS; g++) await boundOnly(t, name(g));
  const d = await spawnDaemon(args, { socket, t });
  t.equal(await d.exited, 1, 'it exits 1');
  t.match(d.stderr(), `all ${LOCK_GENERATIONS} of its lock names are held by something`);
  t.match(d.stderr(), 'ss -xlp | grep mcp-roots');
  t.match(d.stderr(), `remove ${join(dir, 'run', '.lock-token')}`);
  t.equal(readFileSync(join(dir, 'run', '.lock-token'), 'utf8'), 'f'.repeat(32), 'token kept');
});
