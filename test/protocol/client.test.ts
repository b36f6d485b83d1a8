import { once } from 'node:events';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { RootsError } from '../../common/errors.js';
import { RootsClient } from '../../protocol/client.js';
import { JsonRpcConnection } from '../../protocol/connection.js';
import type { InitializeParams, ListChangedParams } from '../../protocol/methods.js';
import { RpcError } from '../../protocol/rpc-errors.js';

async function shortDir(t: Test): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'mr-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const CHANGE: ListChangedParams = { server: 'fs', revision: 2, instance: 'i-1', roots: [] };

/** A fake daemon: enough of mcp-rootsd to exercise the client. */
async function fakeDaemon(t: Test, dir: string) {
  const path = join(dir, 'rootsd.sock');
  const connections: JsonRpcConnection[] = [];
  const initialized: InitializeParams[] = [];
  const server = createServer((socket) => {
    const conn = new JsonRpcConnection(socket, socket);
    connections.push(conn);
    conn
      .onRequest('initialize', (params) => {
        initialized.push(params);
        return {
          protocolVersion: 'mcp-roots/1',
          serverInfo: { name: 'mcp-rootsd', version: '0.1.0' },
          capabilities: {},
        };
      })
      .onRequest('roots/list', ({ server, subscribe }) => {
        if (subscribe === true)
          setImmediate(() => conn.notify('notifications/roots/list_changed', CHANGE));
        return {
          roots: [{ uri: `file:///srv/${server}`, _meta: { 'mcp-roots/readOnly': false } }],
          _meta: { 'mcp-roots/revision': 1, 'mcp-roots/instance': 'i-1' },
        };
      })
      .onRequest('roots/check', (params) => ({
        allowed: true,
        access: params.access ?? 'read',
        reason: JSON.stringify(params),
      }))
      .onRequest('grants/add', () => {
        throw new RootsError('LOCKDOWN', 'lockdown is on: no grants', { hint: 'rootsctl unlock' });
      })
      .onRequest('grants/revoke', (params) => ({ revoked: params.path === undefined ? 2 : 1 }))
      .onRequest('policy/lockdown', ({ on }) => ({ lockdown: on }))
      .onRequest('roots/subscribe', () => new Promise<never>(() => {}))
      .onRequest('policy/explain', ({ server }) => ({
        server,
        roots: Array.from({ length: 30_000 }, (_, i) => ({
          uri: `file:///srv/${'d'.repeat(80)}/${i}`,
          _meta: { 'mcp-roots/readOnly': false },
        })),
        rules: [],
      }));
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  t.teardown(async () => {
    await Promise.all(connections.map((c) => c.close()));
    await new Promise((resolve) => server.close(resolve));
  });
  return { path, connections, initialized };
}

void t.test('a missing socket: DAEMON_UNREACHABLE saying how to start the daemon', async (t) => {
  const path = join(await shortDir(t), 'rootsd.sock');
  await t.rejects(RootsClient.connect({ socket: path }), {
    code: 'DAEMON_UNREACHABLE',
    message: `mcp-rootsd is not running (connect ENOENT ${path}). Start it with \`systemctl --user start mcp-rootsd.socket\` (once \`rootsctl install-service\` has run) or \`mcp-rootsd\`.`,
  });
});

void t.test('a socket nobody listens on: the same, with ECONNREFUSED', async (t) => {
  const path = join(await shortDir(t), 'rootsd.sock');
  await writeFile(path, '');
  await t.rejects(RootsClient.connect({ env: { MCP_ROOTS_SOCKET: path } }), {
    code: 'DAEMON_UNREACHABLE',
    message: `mcp-rootsd is not running (connect ECONNREFUSED ${path}). Start it with \`systemctl --user start mcp-rootsd.socket\` (once \`rootsctl install-service\` has run) or \`mcp-rootsd\`.`,
  });
});

void t.test('the client refuses an unsafe directory before connecting', async (t) => {
  const dir = await shortDir(t);
  const { path, connections } = await fakeDaemon(t, dir);
  await chmod(dir, 0o777);
  await t.rejects(RootsClient.connect({ socket: path }), { code: 'SOCKET_DIR_UNSAFE' });
  t.equal(connections.length, 0, 'never connected');
});

void t.test('the client refuses a socket path too long for sun_path', async (t) => {
  await t.rejects(RootsClient.connect({ socket: '/tmp/' + 'x'.repeat(120) }), {
    code: 'SOCKET_PATH_TOO_LONG',
  });
});

void t.test('a round trip: initialize, methods, list_changed, errors, close', async (t) => {
  const { path, initialized } = await fakeDaemon(t, await shortDir(t));
  const client = await RootsClient.connect({
    socket: path,
    clientInfo: { name: 'test', version: '1.0.0' },
  });
  t.equal(client.socketPath, path);
  t.same(initialized, [
    { protocolVersion: 'mcp-roots/1', clientInfo: { name: 'test', version: '1.0.0' } },
  ]);
  t.equal(client.daemon.serverInfo.name, 'mcp-rootsd');

  const changed = once(client, 'list_changed');
  const list = await client.listRoots('fs', { subscribe: true });
  t.equal(list.roots[0]?.uri, 'file:///srv/fs');
  t.same(await changed, [CHANGE], 'list_changed carries the notification params');

  t.same(JSON.parse((await client.check('fs', '/a')).reason), { server: 'fs', path: '/a' });
  t.equal((await client.check('fs', '/a', 'write')).access, 'write');
  t.same(await client.revoke('fs'), { revoked: 2 });
  t.same(await client.revoke('fs', '/a'), { revoked: 1 });
  t.same(await client.lockdown(true), { lockdown: true });

  const err = await client.grant('fs', '/a', { seconds: 60 }).catch((e: unknown) => e);
  t.ok(err instanceof RpcError && err instanceof RootsError);
  t.match(err, { code: 'LOCKDOWN', rpcCode: -32000, hint: 'rootsctl unlock' });
  t.match(await client.status().catch((e: unknown) => e), { code: 'PROTOCOL', rpcCode: -32601 });
  await t.rejects(client.request('roots/subscribe', { server: 'fs' }, { timeoutMs: 20 }), {
    code: 'TIMEOUT',
  });

  let closes = 0;
  client.on('close', () => closes++);
  const pending = client.request('roots/subscribe', { server: 'fs' });
  const first = client.close();
  t.equal(client.close(), first, 'close() returns the same promise');
  await t.rejects(pending, { code: 'DAEMON_UNREACHABLE' });
  await first;
  t.equal(closes, 1);
  t.equal(client.closed, true);
});

void t.test('the daemon going away rejects pending requests as DAEMON_UNREACHABLE', async (t) => {
  const { path, connections } = await fakeDaemon(t, await shortDir(t));
  const client = await RootsClient.connect({ socket: path });
  const closed = once(client, 'close');
  const pending = t.rejects(client.request('roots/subscribe', { server: 'fs' }), {
    code: 'DAEMON_UNREACHABLE',
    message: /^mcp-rootsd closed the connection on .* before answering roots\/subscribe/,
  });
  await client.lockdown(false); // the subscribe request has reached the daemon
  await connections[0]!.close();
  await pending;
  await closed;
});

void t.test(
  'an answer larger than 1 MiB arrives whole (one big message is not a slow reader)',
  async (t) => {
    const { path } = await fakeDaemon(t, await shortDir(t));
    const client = await RootsClient.connect({ socket: path });
    t.teardown(() => client.close());
    for (let i = 0; i < 3; i++) {
      const explained = await client.explain('fs');
      t.equal(explained.roots.length, 30_000);
      t.ok(JSON.stringify(explained).length > 3 * 1024 * 1024);
    }
  },
);
