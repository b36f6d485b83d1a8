/**
 * Whose message is whose: a host answer reaches the server only for a request the server sent
 * the host; a line the proxy cannot read is never passed on; ids in the proxy's own namespace
 * are refused from either side, so nothing can pose as the answer to the proxy's own questions.
 */
import t from 'tap';
import { idKey } from '../../protocol/messages.js';
import { startFixtureSession, type RawSession } from '../helpers/raw-session.js';
import { fixtureServer } from '../helpers/repo.js';

const WAIT_MS = 30_000;
const MARK = 'MARK-FORBIDDEN';

void t.test('ids and lines the proxy does not pass on', async (t) => {
  const { s, w } = await startFixtureSession(t, {
    server: 'batches',
    fixture: fixtureServer('batches.mjs'),
    mark: MARK,
  });

  let n = 0;
  /** Send `line`, then a ping; resolves once the ping's answer shows everything before it was handled. */
  const settle = async (session: RawSession, line: string | object): Promise<void> => {
    session.send(line);
    const id = `after-${++n}`;
    session.send({ jsonrpc: '2.0', id, method: 'ping' });
    await session.line(`"${id}"`, WAIT_MS);
  };

  await t.test('a host answer to a request the server never sent is dropped', async (t) => {
    // The server's roots come from the proxy alone; a host answer under id 0 (or any other)
    // must not stand in for the proxy's answer to the server's roots/list.
    for (const id of [0, 1, 'batched-roots', 'mcp-roots-proxy:1']) {
      await settle(s, { jsonrpc: '2.0', id, result: { roots: [{ uri: 'file:///' }] } });
    }
    t.notOk(
      s.received().some((l) => l.includes('file:///"')),
      'no host-made roots reached the server',
    );
  });

  await t.test('a host answer to the server’s own request goes through', async (t) => {
    s.send({
      jsonrpc: '2.0',
      id: 'call-1',
      method: 'tools/call',
      params: { name: 'ask_host', arguments: { id: 'srv-1' } },
    });
    await s.line('"srv-1"', WAIT_MS);
    await settle(s, { jsonrpc: '2.0', id: 'srv-1', result: {} });
    t.ok(
      s.received().some((l) => l.includes('"srv-1"') && l.includes('"result"')),
      'the host’s answer reached the server',
    );
  });

  await t.test('a server request in the proxy’s id namespace never reaches the host', async (t) => {
    s.send({
      jsonrpc: '2.0',
      id: 'call-2',
      method: 'tools/call',
      params: { name: 'ask_host', arguments: { id: 'mcp-roots-proxy:ask:1' } },
    });
    await s.line('"call-2"', WAIT_MS);
    await settle(s, { jsonrpc: '2.0', id: 'x', method: 'ping' });
    t.notOk(
      s.hostLines().some((l) => l.includes('"mcp-roots-proxy:ask:1"')),
      'the host never saw it',
    );
    t.ok(
      s.received().some((l) => l.includes('"mcp-roots-proxy:ask:1"') && l.includes('"error"')),
      'the server was told the id is the proxy’s',
    );
  });

  const unreadable: [string, string, number][] = [
    [
      'a call with NaN (JSON.parse refuses it; a lax parser would not)',
      `{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"read_it","arguments":{"path":"${w}/out/o.txt","n":NaN}}}`,
      -32700,
    ],
    [
      'a call with a trailing comma',
      `{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"read_it","arguments":{"path":"${w}/out/o.txt"},}}`,
      -32700,
    ],
    ['not JSON at all', `read ${w}/out/o.txt`, -32700],
    [
      'an object with no method that is no answer',
      `{"jsonrpc":"2.0","id":33,"path":"${w}/out/o.txt"}`,
      -32600,
    ],
    [
      'a request in the proxy’s id namespace',
      `{"jsonrpc":"2.0","id":"mcp-roots-proxy:1","method":"tools/call","params":{"name":"read_it","arguments":{"path":"${w}/out/o.txt"}}}`,
      -32600,
    ],
    // Envelopes MCP's schema refuses: the SDKs' transports drop them unanswered (the host waited
    // for ever), and params that are no object are none to the proxy's checks.
    [
      'params as a list',
      `{"jsonrpc":"2.0","id":34,"method":"tools/call","params":["read_it","${MARK}"]}`,
      -32600,
    ],
    [
      'params as a string, in a notification',
      `{"jsonrpc":"2.0","method":"notifications/x","params":"${MARK}"}`,
      -32600,
    ],
    [
      'params._meta as a list',
      `{"jsonrpc":"2.0","id":35,"method":"ping","params":{"_meta":["${MARK}"]}}`,
      -32600,
    ],
    [
      'a progress token that is an object',
      `{"jsonrpc":"2.0","id":36,"method":"ping","params":{"_meta":{"progressToken":{"m":"${MARK}"}}}}`,
      -32600,
    ],
    [
      'an id that is a fraction',
      `{"jsonrpc":"2.0","id":1.5,"method":"ping","params":{"m":"${MARK}"}}`,
      -32600,
    ],
    ['an id that is an object', `{"jsonrpc":"2.0","id":{"m":"${MARK}"},"method":"ping"}`, -32600],
    [
      'an id past every number',
      `{"jsonrpc":"2.0","id":1e400,"method":"ping","params":{"m":"${MARK}"}}`,
      -32600,
    ],
    ['a null id', `{"jsonrpc":"2.0","id":null,"method":"ping","params":{"m":"${MARK}"}}`, -32600],
  ];
  await t.test('null params, _meta and progress token are none, and pass', async (t) => {
    for (const params of ['null', '{"_meta":null}', '{"_meta":{"progressToken":null}}']) {
      const id = `null-${params.length}`;
      s.send(`{"jsonrpc":"2.0","id":"${id}","method":"ping","params":${params}}`);
      t.match(await s.line(`"${id}"`, WAIT_MS), /"result"/, params);
    }
  });
  for (const [name, line, code] of unreadable) {
    await t.test(`never passed on: ${name}`, async (t) => {
      const before = s.hostLines().length;
      await settle(s, line);
      t.notOk(
        s.received().some((l) => l.includes(MARK) || l.includes('o.txt')),
        'the server received none of it',
      );
      const answers = s.hostLines().slice(before);
      t.ok(
        answers.some((l) => l.includes(`"code":${code}`)),
        `the host is answered ${code}`,
      );
    });
  }
});

void t.test('one id per number, whatever its spelling', (t) => {
  for (const [a, b] of [
    ['3', '3.0'],
    ['3', '30e-1'],
    ['3', '0.3e1'],
    ['100', '1e2'],
    ['-7', '-7.000'],
    ['1.5', '15e-1'],
  ] as const) {
    t.equal(idKey(a), idKey(b), `${a} and ${b}`);
  }
  t.not(idKey('9007199254740993'), idKey('9007199254740992'), 'no rounding through a double');
  t.not(idKey('3'), idKey('"3"'), 'a number is not a string');
  t.end();
});
