/**
 * Hosts that filter the environment: the daemon runs with XDG_RUNTIME_DIR, while rootsctl and the
 * proxy start without it (as the MCP Inspector and some desktop launchers start servers). They
 * find the daemon through the pointer in its state directory, and refuse a pointer someone else
 * could have written. Throwaway users, so that the default socket path of the clients is theirs
 * alone, and so that a second user can own what the first must refuse.
 */
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import t from 'tap';
import { bin } from '../helpers/bin.js';
import { FS_SERVER, waitFor } from '../helpers/proxy.js';
import {
  asUser,
  createUser,
  runAs,
  spawnDaemonAs,
  userEnv,
  type TestUser,
} from '../helpers/users.js';

/** The owner's policy and project; the daemon gets only --config, the rest from the environment. */
function setup(owner: TestUser) {
  const h = owner.home;
  mkdirSync(join(h, 'project'));
  writeFileSync(join(h, 'project', 'hello.txt'), 'hello\n');
  writeFileSync(
    join(h, 'mcp-roots.yaml'),
    `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${h}/project\n`,
  );
  for (const p of ['project', 'project/hello.txt', 'mcp-roots.yaml']) {
    chownSync(join(h, p), owner.uid, owner.gid);
  }
  return {
    socket: join(h, 'run', 'mcp-roots', 'rootsd.sock'),
    state: join(h, '.local', 'state', 'mcp-roots'),
    pointer: join(h, '.local', 'state', 'mcp-roots', 'socket-path'),
  };
}

/** Wait for the daemon's "listening on" however long a loaded machine takes to start it. */
async function listening(daemon: { output(): string }): Promise<void> {
  await waitFor(() => /listening on/.test(daemon.output()), 60_000, 'the daemon listening');
}

/** `rootsctl status` as `user`, with only what a filtering host keeps (no XDG_RUNTIME_DIR). */
function statusAs(user: TestUser) {
  return runAs(user, process.execPath, [bin('rootsctl'), 'status']);
}

/** The built proxy in front of the filesystem server, as `user`, under an SDK client as the host. */
async function proxyAs(t: { teardown(fn: () => unknown): void }, user: TestUser) {
  const [command, args] = asUser(user, process.execPath, [
    bin('proxy'),
    '--server',
    'fs',
    '--',
    process.execPath,
    FS_SERVER,
  ]);
  const transport = new StdioClientTransport({ command, args, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (b: Buffer) => (stderr += b.toString()));
  const client = new Client({ name: 'filtering-host', version: '0' }, { capabilities: {} });
  await client.connect(transport);
  t.teardown(() => client.close());
  const allowed = async () => {
    const r = await client.callTool({ name: 'list_allowed_directories', arguments: {} });
    return (r.content as { text: string }[]).map((c) => c.text).join('\n');
  };
  return { client, allowed, stderr: () => stderr };
}

void t.test('rootsctl and the proxy find the daemon without XDG_RUNTIME_DIR', async (t) => {
  const owner = createUser(t);
  const { socket, pointer } = setup(owner);
  const daemon = await spawnDaemonAs(owner, ['--config', join(owner.home, 'mcp-roots.yaml')], t, {
    XDG_RUNTIME_DIR: join(owner.home, 'run'),
  });
  await listening(daemon);
  t.match(daemon.output(), `listening on ${socket}`, 'the daemon took the XDG socket');
  t.notOk('XDG_RUNTIME_DIR' in userEnv(owner), 'the clients below start without XDG_RUNTIME_DIR');

  const ctl = statusAs(owner);
  t.equal(ctl.status, 0, `rootsctl status finds the daemon: ${ctl.stderr}`);
  t.match(ctl.stdout, socket.replace(owner.home, '~'));

  const proxy = await proxyAs(t, owner);
  await waitFor(
    async () => (await proxy.allowed()).includes(join(owner.home, 'project')),
    10_000,
    "the policy's root reaching the filesystem server",
  );
  t.match(proxy.stderr(), `connected to mcp-rootsd on ${socket}`);
  const read = await proxy.client.callTool({
    name: 'read_text_file',
    arguments: { path: join(owner.home, 'project', 'hello.txt') },
  });
  t.notOk(read.isError, 'a call inside the root goes through');

  await daemon.stop();
  t.notOk(existsSync(pointer), 'a stopped daemon removes its pointer');
});

void t.test('a pointer someone else could have written is refused', async (t) => {
  const owner = createUser(t);
  const other = createUser(t);
  const { state, pointer } = setup(owner);
  const daemon = await spawnDaemonAs(owner, ['--config', join(owner.home, 'mcp-roots.yaml')], t, {
    XDG_RUNTIME_DIR: join(owner.home, 'run'),
  });
  await listening(daemon);
  const good = join(owner.home, 'run', 'mcp-roots', 'rootsd.sock') + '\n';
  const restore = () => {
    rmSync(pointer, { recursive: true, force: true });
    writeFileSync(pointer, good, { mode: 0o600 });
    chownSync(pointer, owner.uid, owner.gid);
    chownSync(state, owner.uid, owner.gid);
    chmodSync(state, 0o700);
  };
  const cases: { name: string; make: () => void; want: RegExp }[] = [
    {
      name: 'owned by another user',
      make: () => chownSync(pointer, other.uid, other.gid),
      want: new RegExp(`socket-path is unsafe: it is owned by uid ${other.uid}, not by you`),
    },
    {
      name: 'writable by others',
      make: () => chmodSync(pointer, 0o666),
      want: /socket-path is unsafe: its mode is 0666, writable by group or others/,
    },
    {
      name: 'writable by the group',
      make: () => chmodSync(pointer, 0o660),
      want: /socket-path is unsafe: its mode is 0660/,
    },
    {
      name: "a symbolic link to the other user's file",
      make: () => {
        const planted = join(other.home, 'pointer');
        writeFileSync(planted, '/tmp/fake/rootsd.sock\n', { mode: 0o644 });
        chmodSync(other.home, 0o755);
        rmSync(pointer);
        symlinkSync(planted, pointer);
      },
      want: /socket-path is unsafe: it is a symbolic link/,
    },
    {
      name: 'in a state directory others can write',
      make: () => chmodSync(state, 0o777),
      want: /mcp-roots is unsafe: its mode is 0777, writable by group or others/,
    },
    {
      name: 'in a state directory of another user',
      make: () => chownSync(state, other.uid, other.gid),
      want: new RegExp(`mcp-roots is unsafe: it is owned by uid ${other.uid}`),
    },
  ];
  const first = statusAs(owner);
  t.equal(first.status, 0, `with its own pointer, rootsctl finds the daemon: ${first.stderr}`);
  for (const c of cases) {
    c.make();
    const r = statusAs(owner);
    t.not(r.status, 0, `${c.name}: rootsctl status fails`);
    t.match(r.stderr, c.want, `${c.name}: and says why`);
    restore();
  }
  // (The daemon may now report the grants file it could not read meanwhile: found is enough.)
  const again = statusAs(owner);
  t.match(again.stdout, 'socket:   ~/run/mcp-roots/rootsd.sock', 'restored, it is found again');

  // The proxy fails closed on it too: no roots, and it says why.
  chownSync(pointer, other.uid, other.gid);
  const proxy = await proxyAs(t, owner);
  await waitFor(() => /socket-path is unsafe/.test(proxy.stderr()), 10_000, 'the proxy warning');
  t.notMatch(await proxy.allowed(), join(owner.home, 'project'), 'the server got no roots');
  const read = await proxy.client.callTool({
    name: 'read_text_file',
    arguments: { path: join(owner.home, 'project', 'hello.txt') },
  });
  t.ok(read.isError, 'and a call is refused');
});
