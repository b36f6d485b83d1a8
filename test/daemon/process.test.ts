/** The daemon as a process: one per socket, stale sockets, signals, permissions, logs. */
import { chmodSync, existsSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { RootsClient } from '../../protocol/client.js';
import { shortDir } from '../helpers/short-dir.js';
import { poll } from '../helpers/poll.js';
import { spawnDaemon } from '../helpers/spawn-daemon.js';

function setup() {
  const dir = shortDir();
  mkdirSync(join(dir, 'proj'));
  const config = join(dir, 'p.yaml');
  writeFileSync(config, `version: 1\nservers:\n  fs:\n    roots: [{path: ${dir}/proj}]\n`);
  const socket = join(dir, 'run', 'rootsd.sock');
  return {
    dir,
    config,
    socket,
    args: ['--config', config, '--socket', socket, '--state-dir', join(dir, 'state')],
  };
}

void t.test(
  'one daemon per socket; kill -9 leaves a stale socket the next one replaces; SIGTERM removes it',
  async (t) => {
    const { socket, args } = setup();
    const first = await spawnDaemon(args, { socket, t });
    t.equal(statSync(join(socket, '..')).mode & 0o777, 0o700, 'socket directory is 0700');
    t.equal(statSync(socket).mode & 0o777, 0o600, 'socket is 0600');
    const second = await spawnDaemon(args, { socket, t });
    t.equal(await second.exited, 1, 'the second daemon exits 1');
    t.match(second.stderr(), new RegExp(`already running \\(pid ${first.child.pid}\\)`));
    first.child.kill('SIGKILL');
    await first.exited;
    t.ok(existsSync(socket), 'kill -9 leaves the socket file behind');
    const third = await spawnDaemon(args, { socket, t });
    const c = await RootsClient.connect({ socket });
    t.equal((await c.listRoots('fs')).roots.length, 1, 'a new daemon replaced the stale socket');
    t.equal((await c.status()).pid, third.child.pid);
    await c.close();
    third.child.kill('SIGTERM');
    t.equal(await third.exited, 0, 'SIGTERM exits 0');
    t.notOk(existsSync(socket), 'and removes its socket');
    t.match(third.stderr(), /SIGTERM received/);
  },
);

void t.test('two daemons starting at the same instant: exactly one wins', async (t) => {
  const { socket, args } = setup();
  const [a, b] = await Promise.all([
    spawnDaemon(args, { socket, t }),
    spawnDaemon(args, { socket, t }),
  ]);
  // The loser exits by itself; the winner is the one answering on the socket, and it keeps
  // running until told to stop (its exit status then says it ended on SIGTERM, not on its own).
  const loser = await Promise.race([a.exited.then(() => a), b.exited.then(() => b)]);
  t.equal(loser.child.exitCode, 1, 'one exits 1');
  // Which message depends on whether the winner already answers when the loser looks.
  t.match(
    loser.stderr(),
    /already running|another mcp-rootsd holds .* \(it is starting or not answering\)/,
  );
  const winner = loser === a ? b : a;
  const c = await RootsClient.connect({ socket });
  t.equal((await c.status()).pid, winner.child.pid, 'the other serves the socket');
  await c.close();
  t.equal(winner.child.exitCode, null, 'and is still running');
  winner.child.kill('SIGTERM');
  t.equal(await winner.exited, 0, 'until SIGTERM');
  t.match(winner.stderr(), /SIGTERM received/);
});

void t.test('a group-writable socket directory makes the daemon refuse to start', async (t) => {
  const { dir, socket, args } = setup();
  mkdirSync(join(dir, 'run'));
  chmodSync(join(dir, 'run'), 0o770);
  const p = await spawnDaemon(args, { socket, t });
  t.equal(await p.exited, 1);
  t.match(p.stderr(), /socket directory .* is unsafe: its mode is 0770.*chmod 700/);
  const rc = await RootsClient.connect({ socket }).catch((e: Error) => e);
  t.match(rc, { code: 'SOCKET_DIR_UNSAFE' }, 'clients refuse it too');
});

void t.test(
  'SIGHUP reloads; an invalid policy at start serves nothing and reports errors',
  async (t) => {
    const { dir, config, socket, args } = setup();
    writeFileSync(config, 'version: 1\nservers:\n  fs:\n    roots: [{path: 42}, {path: 43}]\n');
    const p = await spawnDaemon(args, { socket, t, env: { JOURNAL_STREAM: '8:1234' } });
    const c = await RootsClient.connect({ socket });
    const status = await c.status();
    t.equal(status.policy.errors.length, 2);
    t.same((await c.listRoots('fs')).roots, []);
    writeFileSync(config, `version: 1\nservers:\n  fs:\n    roots: [{path: ${dir}/proj}]\n`);
    const changed = new Promise((r) => c.once('list_changed', r));
    await c.listRoots('fs', { subscribe: true });
    p.child.kill('SIGHUP');
    await changed;
    t.equal((await c.listRoots('fs')).roots.length, 1, 'SIGHUP re-read the policy');
    await c.close();
    p.child.kill('SIGINT');
    t.equal(await p.exited, 0);
    t.match(p.stderr(), /^<3>policy file invalid/m, 'journal lines carry syslog priorities');
    // Nothing was valid since start: there is no last good policy to speak of.
    t.match(
      p.stderr(),
      /^<3>policy file invalid, no policy was valid since start, so every server has no roots until it is fixed:/m,
    );
    t.notMatch(p.stderr(), /last good policy/, 'no last good policy is claimed');
    // The warning names the file with the errors, apart from what serves (the grants file alone).
    const notLoaded = /^<4>policy not loaded \(start\).*$/m.exec(p.stderr())?.[0] ?? '';
    t.match(notLoaded, `invalid=${JSON.stringify([config])}`);
    t.match(notLoaded, /serving=\[/);
    t.notMatch(notLoaded, / files=/, 'no list named files that holds only the grants file');
    // The rest of the errors are one command away, written as the person can run it: rootsctl is
    // not on this PATH, and this daemon's socket is not the default one.
    const more = /\(and 1 more; see `(.*)`\)$/m.exec(p.stderr());
    t.ok(more, 'the line points to the other error');
    t.match(more?.[1], /^node \S*main\.js --socket \S+ status$/);
    t.ok(more?.[1]?.includes(socket), "with the daemon's socket");
    t.match(p.stderr(), `ask it: ${more?.[1]}`, 'the same command as the start-up line');
    t.match(p.stderr(), /^<6>mcp-rootsd .* listening on/m);
    // Counted as `rootsctl status` counts: those above apart.
    t.match(p.stderr(), /^<6>watching \d+ director(y|ies) \(and \d+ above them; events\)$/m);
  },
);

void t.test(
  'a reload whose policy is refused keeps the time the policy in force was read',
  async (t) => {
    const { config, socket, args } = setup();
    const p = await spawnDaemon(args, { socket, t });
    const c = await RootsClient.connect({ socket });
    const before = (await c.status()).policy.loadedAt;
    writeFileSync(config, 'version: 1\nservers:\n  fs:\n    roots: [{path: 42}]\n');
    // SIGHUP reloads the policy and the grants: the grants load, the policy does not.
    p.child.kill('SIGHUP');
    t.ok(
      await poll(() => /policy not loaded \(SIGHUP\)/.test(p.stderr()), 30_000),
      'the reload was refused',
    );
    const status = await c.status();
    t.equal(status.policy.errors.length, 1);
    t.equal(status.policy.loadedAt, before, 'loaded when the policy in force was read');
    t.match(
      p.stderr(),
      `still serving the last good policy (1 file, 1 named server, 1 root, loaded ${before})`,
    );
    await c.close();
  },
);

void t.test('--log-format json writes one JSON object per line', async (t) => {
  const { socket, args } = setup();
  const p = await spawnDaemon([...args, '--log-format', 'json'], { socket, t });
  p.child.kill('SIGTERM');
  await p.exited;
  const lines = p.stderr().trim().split('\n');
  for (const line of lines) t.doesNotThrow(() => JSON.parse(line) as unknown, line);
  t.ok(
    lines.some((l) => (JSON.parse(l) as { message: string }).message.startsWith('policy loaded')),
  );
});

void t.test('a socket path too long for sun_path is an error, never truncated', async (t) => {
  const { args } = setup();
  const long = join(shortDir(), 'x'.repeat(120), 's.sock');
  const p = await spawnDaemon([...args.slice(0, 2), '--socket', long], { socket: long, t });
  t.equal(await p.exited, 1);
  t.match(p.stderr(), /at most 107/);
});

void t.test('a bad option names the --help to run as the person started the daemon', async (t) => {
  const { socket, args } = setup();
  // From the clone, with no mcp-rootsd on PATH: the README's `node dist/daemon/main.js`.
  const p = await spawnDaemon([...args, '--settle-ms', 'abc'], {
    socket,
    t,
    env: { PATH: dirname(process.execPath) },
  });
  t.equal(await p.exited, 2);
  t.equal(
    p.stderr(),
    'mcp-rootsd: --settle-ms must be a number ≥ 0, not "abc"\n' +
      'Run `node dist/daemon/main.js --help` for the options.\n',
  );
});
