/** Every method and error of docs/protocol.md against a real daemon, in raw bytes and through RootsClient. */
import { mkdirSync, realpathSync, symlinkSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { nextEvent, shortDir, startDaemon, startLargeListDaemon } from '../helpers/daemon.js';
import { poll, waitFor } from '../helpers/poll.js';
import { rawConnect } from '../helpers/raw.js';

function policy(dir: string) {
  return `version: 1
deny: [${dir}/proj/secret]
servers:
  fs:
    roots:
      - path: ${dir}/proj
      - {path: ${dir}/ro, readOnly: true, expires: 2099-01-01T00:00:00Z}
  other:
    roots: [{path: ${dir}/other}]
`;
}

async function setup(t: { teardown(fn: () => unknown): void }) {
  const dir = shortDir();
  for (const p of ['proj/secret', 'ro', 'other', 'proj-evil'])
    mkdirSync(join(dir, p), { recursive: true });
  const d = await startDaemon(t, policy(dir), { dir });
  return { d, dir, real: realpathSync(dir) };
}

void t.test('every method answers as docs/protocol.md says', async (t) => {
  const { d, dir, real } = await setup(t);
  const raw = await rawConnect(d.socket);
  raw.send(
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"mcp-roots/1","clientInfo":{"name":"raw","version":"1"}}}\n',
  );
  const init = (await raw.next()) as {
    result: { protocolVersion: string; serverInfo: { name: string } };
  };
  t.equal(init.result.protocolVersion, 'mcp-roots/1');
  t.equal(init.result.serverInfo.name, 'mcp-rootsd');

  raw.send('{"jsonrpc":"2.0","id":2,"method":"roots/list","params":{"server":"fs"}}\n');
  const list = (await raw.next()) as {
    id: number;
    result: {
      roots: { uri: string; name: string; _meta: Record<string, unknown> }[];
      _meta: Record<string, unknown>;
    };
  };
  t.equal(list.id, 2);
  t.same(list.result.roots, [
    {
      uri: pathToFileURL(join(real, 'proj')).href,
      name: 'proj',
      _meta: {
        'mcp-roots/readOnly': false,
        'mcp-roots/deny': [{ uri: pathToFileURL(join(real, 'proj/secret')).href, access: 'all' }],
      },
    },
    {
      uri: pathToFileURL(join(real, 'ro')).href,
      name: 'ro',
      _meta: { 'mcp-roots/readOnly': true, 'mcp-roots/expiresAt': '2099-01-01T00:00:00.000Z' },
    },
  ]);
  t.type(list.result._meta['mcp-roots/revision'], 'number');
  t.type(list.result._meta['mcp-roots/instance'], 'string');

  raw.send('{"jsonrpc":"2.0","id":"s","method":"roots/list","params":{"server":"nobody"}}\n');
  t.same(
    ((await raw.next()) as { result: { roots: unknown[] } }).result.roots,
    [],
    'unknown server: empty list, not an error',
  );

  const c = await d.connect();
  t.match(await c.check('fs', join(dir, 'proj/a.txt')), { allowed: true, access: 'read' });
  t.match(await c.check('fs', join(dir, 'proj/secret/k')), {
    allowed: false,
    reason: /denied by deny/,
    refusal: 'denied',
  });
  t.match(await c.check('fs', join(dir, 'proj-evil/x')), {
    allowed: false,
    reason: /outside every root/,
    refusal: 'outside',
  });
  t.match(await c.check('fs', join(dir, 'ro/x'), 'write'), {
    allowed: false,
    reason: /read-only root/,
    refusal: 'read-only',
  });
  symlinkSync(join(dir, 'other'), join(dir, 'proj/link'));
  t.match(
    await c.check('fs', join(dir, 'proj/link/x')),
    { allowed: false },
    'a symlink out of the root is judged where it leads',
  );
  const explained = await c.explain('fs');
  t.equal(explained.server, 'fs');
  t.same(
    explained.rules.filter((r) => r.kind === 'root').map((r) => [r.line, r.column, r.path]),
    [
      [6, 9, `${dir}/proj`],
      [7, 9, `${dir}/ro`],
    ],
  );
  t.ok(explained.rules.some((r) => r.kind === 'deny' && r.line === 2));
  const reload = await c.reload();
  t.match(reload, { ok: true, errors: [], warnings: [] });
  const status = await c.status();
  t.match(status, {
    pid: process.pid,
    socket: d.socket,
    policy: { files: [d.config], errors: [] },
    lockdown: false,
    watches: { mode: String },
  });
  t.same(
    status.servers.map((s) => [s.name, s.roots, s.readOnly]),
    [
      ['fs', 2, 1],
      ['other', 1, 0],
    ],
  );
  t.equal(status.servers[0]!.nextExpiry, '2099-01-01T00:00:00.000Z');
  t.ok(status.connections.some((x) => x.client === 'raw 1'));
  t.same(await c.subscribe('fs'), { revision: status.policy.revision });
  t.same(await c.unsubscribe('fs'), {});
  raw.close();
});

void t.test('protocol faults get JSON-RPC errors and the connection lives on', async (t) => {
  const { d } = await setup(t);
  const raw = await rawConnect(d.socket);
  const cases: [string, number, unknown][] = [
    ['not json\n', -32700, null],
    ['[{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{"server":"fs"}}]\n', -32600, null],
    ['{"jsonrpc":"2.0","id":7,"method":"no/such","params":{}}\n', -32601, 7],
    ['{"jsonrpc":"2.0","id":8,"method":"roots/list","params":{"server":""}}\n', -32602, 8],
    [
      '{"jsonrpc":"2.0","id":9,"method":"roots/check","params":{"server":"fs","path":"/x","access":"exec"}}\n',
      -32602,
      9,
    ],
    ['{"jsonrpc":"2.0","id":"str","method":"roots/list","params":{"server":42}}\n', -32602, 'str'],
    ['{"jsonrpc":"1.0","id":10,"method":"roots/list"}\n', -32600, 10],
  ];
  for (const [line, code, id] of cases) {
    raw.send(line);
    const answer = (await raw.next()) as { id: unknown; error: { code: number; message: string } };
    t.equal(
      answer.error.code,
      code,
      `${line.trim().slice(0, 40)} → ${code}: ${answer.error.message}`,
    );
    t.same(answer.id, id);
  }
  raw.send('{"jsonrpc":"2.0","id":11,"method":"roots/list","params":{"server":"fs"}}\n');
  t.equal(
    ((await raw.next()) as { result: { roots: unknown[] } }).result.roots.length,
    2,
    'still answering',
  );
  const c = await d.connect();
  await t.rejects(c.request('grants/add', { server: 'fs', path: '/nonexistent/x' }), {
    code: 'PATH_NOT_FOUND',
    rpcCode: -32000,
  });
});

void t.test(
  'a character split across two writes decodes; a 2 MiB line closes only that connection',
  async (t) => {
    const { d } = await setup(t);
    // The daemon's end of the connection, to see the first half arrive there on its own.
    const accepted = new Promise<Socket>((r) => d.daemon.listener.server.once('connection', r));
    const raw = await rawConnect(d.socket);
    const daemonSide = await accepted;
    const msg = Buffer.from(
      '{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{"server":"fé"}}\n',
    );
    const cut = msg.indexOf(0xc3) + 1; // inside the two bytes of é
    raw.send(msg.subarray(0, cut));
    await waitFor(() => daemonSide.bytesRead >= cut, 30_000, 'the first half read by the daemon');
    raw.send(msg.subarray(cut));
    t.same(((await raw.next()) as { result: { roots: unknown[] } }).result.roots, []);
    const big = await rawConnect(d.socket);
    big.send(
      `{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{"server":"${'x'.repeat(2 * 1024 * 1024)}"}}\n`,
    );
    const answer = (await big.next()) as { error: { code: number } };
    t.equal(answer.error.code, -32600);
    await big.closed;
    raw.send('{"jsonrpc":"2.0","id":2,"method":"roots/list","params":{"server":"fs"}}\n');
    t.equal(((await raw.next()) as { id: number }).id, 2, 'other connections unaffected');
  },
);

void t.test(
  'subscribers get exactly one notification per change, none for other servers',
  async (t) => {
    const { d, dir } = await setup(t);
    const a = await d.connect('a');
    const b = await d.connect('b');
    await a.listRoots('fs', { subscribe: true });
    await b.listRoots('other', { subscribe: true });
    const aEvents: unknown[] = [];
    const bEvents: unknown[] = [];
    a.on('list_changed', (p) => aEvents.push(p));
    b.on('list_changed', (p) => bEvents.push(p));
    mkdirSync(join(dir, 'more'));
    d.writePolicy(policy(dir).replace('  other:', `      - path: ${dir}/more\n  other:`));
    const got = nextEvent<{ server: string; revision: number; instance: string; roots: unknown[] }>(
      a,
      'list_changed',
    );
    await a.reload();
    const p = await got;
    t.equal(p.server, 'fs');
    t.equal(p.roots.length, 3);
    t.equal(p.instance, a.daemon ? (await a.listRoots('fs'))._meta['mcp-roots/instance'] : '');
    // A reload that changes nothing, then a change to both servers as a sentinel: the daemon
    // writes to each connection in order, so a notification the first change or the empty
    // reload still had coming would arrive before the sentinel's.
    await a.reload();
    mkdirSync(join(dir, 'more2'));
    d.writePolicy(
      policy(dir)
        .replace('  other:', `      - path: ${dir}/more\n      - path: ${dir}/more2\n  other:`)
        .replace(`[{path: ${dir}/other}]`, `[{path: ${dir}/other}, {path: ${dir}/more2}]`),
    );
    const aSentinel = nextEvent<{ roots: unknown[] }>(a, 'list_changed');
    const bSentinel = nextEvent<{ roots: unknown[] }>(b, 'list_changed');
    await a.reload();
    t.equal((await aSentinel).roots.length, 4, "the sentinel's notification for fs");
    t.equal((await bSentinel).roots.length, 2, 'and for other');
    t.equal(aEvents.length, 2, 'one notification per change, none for the empty reload');
    t.equal(bEvents.length, 1, 'none for a server whose list did not change');
  },
);

void t.test('a client that stops reading is cut off once 1 MiB is queued', async (t) => {
  const { d } = await startLargeListDaemon(t);
  const raw = await rawConnect(d.socket);
  raw.socket.pause();
  const req = '{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{"server":"fs"}}\n';
  for (let i = 0; i < 60; i++) raw.send(req);
  // A paused socket does not see its own close: watch the daemon's side instead.
  await poll(() => d.daemon.server.clientCount === 0, 30_000);
  t.equal(d.daemon.server.clientCount, 0, 'the daemon closed the slow reader');
  raw.close();
  const c = await d.connect();
  t.equal((await c.listRoots('fs')).roots.length, 3000, 'and keeps serving everyone else');
});

void t.test('hundreds of connections opening and closing leave nothing behind', async (t) => {
  const { d } = await setup(t);
  const before = (await (await d.connect('probe')).status()).clients;
  // The daemon's own parts (the server, the decision log) listen for good; connections must not.
  const listeners = d.daemon.state.listenerCount('changed');
  for (let round = 0; round < 5; round++) {
    const clients = await Promise.all(Array.from({ length: 60 }, () => d.connect('churn')));
    await Promise.all(clients.map((c) => c.listRoots('fs', { subscribe: true })));
    await Promise.all(clients.map((c) => c.close()));
  }
  const raws = await Promise.all(Array.from({ length: 50 }, () => rawConnect(d.socket)));
  for (const r of raws) r.close();
  await Promise.all(raws.map((r) => r.closed));
  // Wait for the daemon to have seen every close (its own count), not for a guessed delay.
  while (d.daemon.server.clientCount > before) await new Promise((r) => setImmediate(r));
  const status = await (await d.connect('probe2')).status();
  t.equal(status.clients, before + 1, 'only the probes remain');
  t.equal(status.subscriptions, 0);
  t.equal(d.daemon.state.listenerCount('changed'), listeners, 'no listener leak on the state');
});
