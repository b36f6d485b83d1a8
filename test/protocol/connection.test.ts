import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { RootsError } from '../../common/errors.js';
import { JsonRpcConnection, type JsonRpcConnectionOptions } from '../../protocol/connection.js';
import { LineFramer } from '../../protocol/framer.js';
import type { ListChangedParams, ListRootsResult } from '../../protocol/methods.js';
import { rawJson } from '../../protocol/raw-json.js';
import { RpcError } from '../../protocol/rpc-errors.js';

/** `promise`, or an error naming `what` after `ms` (only a ceiling: the machine may be loaded). */
function within<T>(promise: Promise<T>, what: string, ms = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const LIST: ListRootsResult = {
  roots: [{ uri: 'file:///srv/fs', name: 'fs', _meta: { 'mcp-roots/readOnly': true } }],
  _meta: { 'mcp-roots/revision': 1, 'mcp-roots/instance': 'i-1' },
};

/** A test daemon: the usual handlers, on a socket in a short temporary directory. */
async function startServer(
  t: Test,
  setup: (conn: JsonRpcConnection, socket: Socket) => void = () => {},
  options: JsonRpcConnectionOptions = {},
): Promise<{ path: string; connections: JsonRpcConnection[]; errors: unknown[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'mr-'));
  const path = join(dir, 's.sock');
  const connections: JsonRpcConnection[] = [];
  const errors: unknown[] = [];
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    const peerEnded = once(socket, 'end');
    const conn = new JsonRpcConnection(socket, socket, {
      onError: (err) => errors.push(err),
      ...options,
    });
    connections.push(conn);
    conn
      .onRequest('roots/list', ({ server }) => ({
        ...LIST,
        roots: [{ ...LIST.roots[0]!, name: server }],
      }))
      .onRequest('roots/check', async ({ server, path, access }) => {
        // A check still running when the peer half-closes: it answers only after that.
        if (path === '/after-end') await peerEnded;
        return {
          allowed: false,
          access: access ?? 'read',
          reason: `${server} may not see ${path}`,
        };
      })
      .onRequest('roots/subscribe', () => new Promise<never>(() => {}))
      .onRequest('grants/add', () => {
        throw new RootsError('GRANT_DENIED', '/etc is protected', { hint: 'pick another path' });
      })
      .onRequest('daemon/status', () => {
        throw new TypeError('boom at /home/ada/secret');
      })
      .onRequest('policy/explain', ({ server }) =>
        rawJson(`{"server":${JSON.stringify(server)},"roots":[],"rules":[]}`),
      );
    setup(conn, socket);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  t.teardown(async () => {
    await Promise.all(connections.map((c) => c.close()));
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });
  return { path, connections, errors };
}

/** A client that speaks raw lines, to send what a well-behaved client never would. */
async function rawClient(t: Test, path: string) {
  const socket = connect(path);
  socket.on('error', () => {});
  await once(socket, 'connect');
  t.teardown(() => socket.destroy());
  const framer = new LineFramer({ maxLineBytes: 64 * 1024 * 1024 });
  const queue: Record<string, unknown>[] = [];
  const waiters: ((msg: Record<string, unknown>) => void)[] = [];
  socket.on('data', (chunk: Buffer) => {
    for (const line of framer.push(chunk).lines) {
      const msg = JSON.parse(line) as Record<string, unknown>;
      const waiter = waiters.shift();
      if (waiter) waiter(msg);
      else queue.push(msg);
    }
  });
  return {
    socket,
    send(text: string) {
      socket.write(text);
    },
    next(): Promise<Record<string, unknown>> {
      const queued = queue.shift();
      if (queued !== undefined) return Promise.resolve(queued);
      return within(new Promise((resolve) => waiters.push(resolve)), 'a message');
    },
  };
}

async function clientConnection(t: Test, path: string): Promise<JsonRpcConnection> {
  const socket = connect(path);
  await once(socket, 'connect');
  const conn = new JsonRpcConnection(socket, socket);
  t.teardown(() => conn.close());
  return conn;
}

void t.test('requests pair with typed results', async (t) => {
  const { path } = await startServer(t);
  const client = await clientConnection(t, path);
  const [a, b] = await Promise.all([
    client.request('roots/list', { server: 'alpha' }),
    client.request('roots/list', { server: 'beta' }),
  ]);
  t.equal(a.roots[0]?.name, 'alpha');
  t.equal(b.roots[0]?.name, 'beta');
  t.equal(b._meta['mcp-roots/revision'], 1);
  const explained = await client.request('policy/explain', { server: 'raw' });
  t.same(explained, { server: 'raw', roots: [], rules: [] }, 'a RawJson result goes out as is');

  // Compile-time only: the method map types params and results.
  const typed = async (): Promise<void> => {
    // @ts-expect-error: roots/list needs a server
    await client.request('roots/list', { srv: 'x' });
    // @ts-expect-error: no such method
    await client.request('roots/lst', { server: 'x' });
    const r = await client.request('roots/check', { server: 'x', path: '/' });
    // @ts-expect-error: allowed is a boolean
    const s: string = r.allowed;
    void s;
  };
  void typed;
});

void t.test('every protocol fault is answered and the connection lives on', async (t) => {
  const { path, errors } = await startServer(t);
  const c = await rawClient(t, path);
  const ok = '{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{"server":"fs"}}\n';

  c.send('this is not json\n');
  t.match(await c.next(), { jsonrpc: '2.0', id: null, error: { code: -32700 } }, 'parse error');
  c.send(ok);
  t.match(await c.next(), { id: 1, result: { roots: [{ name: 'fs' }] } }, 'valid after malformed');

  c.send('[' + ok.trim() + ']\n');
  t.match(await c.next(), { id: null, error: { code: -32600, message: /batch/ } }, 'batch');
  c.send('42\n');
  t.match(await c.next(), { id: null, error: { code: -32600 } }, 'not an object');
  c.send('{"id":3,"method":"roots/list","params":{"server":"fs"}}\n');
  t.match(await c.next(), { id: 3, error: { code: -32600, message: /jsonrpc/ } }, 'no jsonrpc');
  c.send('{"jsonrpc":"2.0","id":4,"method":5}\n');
  t.match(await c.next(), { id: 4, error: { code: -32600, message: /method/ } }, 'bad method');
  c.send('{"jsonrpc":"2.0","id":{"x":1},"method":"roots/list","params":{"server":"fs"}}\n');
  t.match(await c.next(), { id: null, error: { code: -32600, message: /id/ } }, 'bad id type');
  c.send('{"jsonrpc":"2.0","id":5,"method":"roots/nope","params":{}}\n');
  t.match(
    await c.next(),
    { id: 5, error: { code: -32601, message: 'method not found: "roots/nope"' } },
    'unknown method',
  );
  c.send('{"jsonrpc":"2.0","id":6,"method":"roots/list","params":{"server":""}}\n');
  t.match(
    await c.next(),
    {
      id: 6,
      error: {
        code: -32602,
        message: /^roots\/list: params\.server must be a non-empty string/,
        data: { code: 'SERVER_NAME_INVALID' },
      },
    },
    'invalid params name the field',
  );
  c.send('{"jsonrpc":"2.0","id":7,"method":"grants/add","params":{"server":"fs","path":"/etc"}}\n');
  t.same(
    await c.next(),
    {
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32000,
        message: '/etc is protected',
        data: { code: 'GRANT_DENIED', hint: 'pick another path' },
      },
    },
    'a RootsError is a domain error',
  );
  c.send('{"jsonrpc":"2.0","id":8,"method":"daemon/status"}\n');
  const internal = await c.next();
  t.match(internal, { id: 8, error: { code: -32603, data: { code: 'INTERNAL' } } }, 'internal');
  t.notMatch(JSON.stringify(internal), /boom|secret|TypeError/, 'nothing of the exception leaks');
  t.equal(errors.length, 1, 'the exception goes to onError');

  c.send('{"jsonrpc":"2.0","method":"something/unknown"}\n\n   \r\n');
  c.send(ok);
  t.match(
    await c.next(),
    { id: 1, result: {} },
    'unknown notifications and blank lines: no answer',
  );
});

void t.test('ids of every JSON type are echoed as received', async (t) => {
  const { path } = await startServer(t);
  const c = await rawClient(t, path);
  for (const id of ['abc', 7, null, 1.5, -3, '']) {
    c.send(
      JSON.stringify({ jsonrpc: '2.0', id, method: 'roots/list', params: { server: 'fs' } }) + '\n',
    );
    const answer = await c.next();
    t.ok(Object.hasOwn(answer, 'id'));
    t.equal(answer.id, id, `id ${JSON.stringify(id)}`);
    t.ok(answer.result);
  }
});

void t.test('answers still in flight are sent after the peer half-closes', async (t) => {
  const { path } = await startServer(t);
  const c = await rawClient(t, path);
  c.send(
    '{"jsonrpc":"2.0","id":"late","method":"roots/check","params":{"server":"fs","path":"/after-end"}}\n',
  );
  c.socket.end();
  t.match(await c.next(), {
    id: 'late',
    result: { allowed: false, reason: 'fs may not see /after-end' },
  });
  await within(once(c.socket, 'close'), 'the server to close');
});

void t.test(
  'a line over the cap gets -32600 before any newline, then the connection closes',
  async (t) => {
    const closed: string[] = [];
    const { path } = await startServer(t, (conn) =>
      conn.on('close', (reason) => closed.push(reason)),
    );
    const c = await rawClient(t, path);
    c.send(
      '{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{"server":"' +
        'x'.repeat(1024 * 1024),
    );
    t.match(await c.next(), {
      id: null,
      error: { code: -32600, message: /longer than 1048576 bytes/ },
    });
    await within(once(c.socket, 'close'), 'the server to close');
    t.same(closed, ['a message is longer than 1048576 bytes']);
  },
);

void t.test('a reader that does not read is cut off past 1 MiB of queued output', async (t) => {
  let sent = 0;
  let params: ListChangedParams | undefined;
  let result: ReturnType<JsonRpcConnection['notify']> | undefined;
  const closed = new Promise<string>((resolve) => {
    void startServer(t, (conn) => {
      conn.once('close', resolve);
      params = {
        server: 'fs',
        revision: 1,
        instance: 'i',
        roots: [{ uri: 'file:///' + 'x'.repeat(1000), _meta: { 'mcp-roots/readOnly': false } }],
      };
      while (sent < 100_000 && (result = conn.notify('notifications/roots/list_changed', params)))
        sent++;
    }).then(({ path }) => {
      // Connected but never reading: no 'data' listener, so the socket stays paused.
      const socket = connect(path);
      socket.on('error', () => {});
      t.teardown(() => socket.destroy());
    });
  });
  const reason = await within(closed, 'the slow reader to be cut off');
  t.match(reason, /not reading: more than 1048576 bytes of output queued/);
  t.equal(result, false, 'notify says the message was not queued');
  const bytes = sent * (JSON.stringify({ jsonrpc: '2.0', method: 'x', params }).length + 1);
  t.ok(bytes > 1024 * 1024, `more than 1 MiB went out first (${bytes} bytes)`);
});

void t.test('notifications reach onNotification with validated params', async (t) => {
  const params: ListChangedParams = { server: 'fs', revision: 2, instance: 'i', roots: LIST.roots };
  const { path } = await startServer(t, (conn) => {
    conn.notify('notifications/roots/list_changed', { ...params, server: '' }); // invalid: dropped
    conn.notify('notifications/roots/list_changed', params);
  });
  const socket = connect(path);
  await once(socket, 'connect');
  const errors: unknown[] = [];
  const client = new JsonRpcConnection(socket, socket, { onError: (err) => errors.push(err) });
  t.teardown(() => client.close());
  const got = await within(
    new Promise<ListChangedParams>((resolve) =>
      client.onNotification('notifications/roots/list_changed', resolve),
    ),
    'a notification',
  );
  t.same(got, params);
  t.equal(errors.length, 1, 'the invalid one was reported and dropped');
});

void t.test('close() is idempotent, emits close once and rejects pending requests', async (t) => {
  const { path } = await startServer(t);
  const client = await clientConnection(t, path);
  let closes = 0;
  client.on('close', () => closes++);
  const pending = client.request('roots/subscribe', { server: 'fs' });
  await client.request('roots/list', { server: 'fs' }); // the subscribe request has been sent
  const first = client.close();
  const second = client.close();
  t.equal(first, second, 'the same promise');
  await t.rejects(pending, {
    code: 'PROTOCOL',
    message: /roots\/subscribe: the connection closed/,
  });
  await first;
  t.equal(client.closed, true);
  t.equal(closes, 1);
  await t.rejects(client.request('roots/list', { server: 'fs' }), { code: 'PROTOCOL' });
  await client.close();
  t.equal(closes, 1, 'still once');
});

void t.test('the peer closing rejects pending requests; a timeout rejects one', async (t) => {
  const { path, connections } = await startServer(t);
  const client = await clientConnection(t, path);
  await t.rejects(client.request('roots/subscribe', { server: 'fs' }, { timeoutMs: 50 }), {
    code: 'TIMEOUT',
    message: 'roots/subscribe: no answer within 50 ms',
  });
  const pending = t.rejects(client.request('roots/subscribe', { server: 'fs' }), {
    code: 'PROTOCOL',
    message: /^roots\/subscribe: the connection closed before the answer arrived/,
  });
  const closed = once(client, 'close');
  await within(
    (async () => {
      while (connections.length === 0) await new Promise((r) => setImmediate(r));
    })(),
    'the server side',
  );
  await connections[0]!.close();
  await pending;
  // The reason depends on the race: 'connection closed', or ECONNRESET if our request was unread.
  t.match(await within(closed, 'close'), [String]);
});

void t.test('an error answer becomes an RpcError with both codes', async (t) => {
  const { path } = await startServer(t);
  const client = await clientConnection(t, path);
  const err = await client
    .request('grants/add', { server: 'fs', path: '/etc' })
    .catch((e: unknown) => e);
  t.ok(err instanceof RpcError);
  t.ok(err instanceof RootsError);
  t.match(err, { code: 'GRANT_DENIED', rpcCode: -32000, hint: 'pick another path' });
});

void t.test(
  'any stream pair works (stdio-like); end of input waits for answers in flight',
  async (t) => {
    const input = new PassThrough();
    const output = new PassThrough();
    const conn = new JsonRpcConnection(input, output);
    const inputEnded = once(input, 'end');
    conn.onRequest('roots/check', async ({ path }) => {
      // Still running when the input ends: it answers only after that.
      await inputEnded;
      return { allowed: true, access: 'read', reason: path };
    });
    const closed = once(conn, 'close');
    input.write(
      '{"jsonrpc":"2.0","id":1,"method":"roots/check","params":{"server":"s","path":"/€"}}',
    );
    input.end('\n');
    const chunks: Buffer[] = [];
    output.on('data', (chunk: Buffer) => chunks.push(chunk));
    t.same(await within(closed, 'close'), ['the peer closed the connection']);
    t.same(JSON.parse(Buffer.concat(chunks).toString('utf8')), {
      jsonrpc: '2.0',
      id: 1,
      result: { allowed: true, access: 'read', reason: '/€' },
    });
  },
);
