/**
 * Whose answer is whose, attacked from both sides. A host answer reaches the server only for a
 * request that server sent the host and that is still open: not twice, not under another id,
 * not once the server cancelled it, reused its id for a request the proxy answers itself
 * (`roots/list`: the host's answer would stand in for the policy's roots), or was replaced by a
 * restart. Cancellations never name the proxy's own requests, from either side. A server request
 * whose envelope another reader could read differently never reaches the host.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { waitFor } from '../helpers/proxy.js';
import { startFixtureSession, type RawSession } from '../helpers/raw-session.js';
import { fixtureServer } from '../helpers/repo.js';

const WAIT_MS = 30_000;
/** The roots a host would like the server to have. */
const HOST_ROOTS = '{"roots":[{"uri":"file:///"}]}';

let n = 0;
/** Have the server write `lines` to the host, exactly as given; resolves once its call is answered. */
async function serverSends(s: RawSession, lines: string[]): Promise<void> {
  const id = `raw-${++n}`;
  s.send({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'send_raw', arguments: { lines } },
  });
  await s.line(`"id":"${id}"`, WAIT_MS);
}

/** Send `line` from the host, then a ping; resolves once everything before the ping was handled. */
async function hostSends(s: RawSession, line: string): Promise<void> {
  s.send(line);
  const id = `after-${++n}`;
  s.send({ jsonrpc: '2.0', id, method: 'ping' });
  await s.line(`"${id}"`, WAIT_MS);
  // The ping's answer comes from the server, after every line the proxy passed on before it.
}

const answered = (s: RawSession, idText: string): boolean =>
  s.received().some((l) => l.includes(`"id":${idText}`) && /"(result|error)"/.test(l));

void t.test('host answers and cancellations', async (t) => {
  const {
    s,
    w,
    daemon: d,
  } = await startFixtureSession(t, {
    server: 'batches',
    fixture: fixtureServer('batches.mjs'),
    prepare: (w) => mkdirSync(join(w, 'more')),
    serverArgs: ['{roots}'],
    answered: '"batches"',
  });

  // [what, the server's request id, the host's answer id, whether the server gets the answer]
  const spellings: [string, string, string, boolean][] = [
    ['the same id', '"s-1"', '"s-1"', true],
    ['a number as a string', '31', '"31"', false],
    ['a string as a number', '"32"', '32', false],
    ['3.0 for 3 (one number)', '33', '33.0', true],
    ['3.3e1 for 33 (one number)', '34', '3.4e1', true],
    ['-0 for 0', '0', '-0', true],
    ['an escaped string', '"s-2"', '"s\\u002d2"', true],
    ['a case variant', '"s-3"', '"S-3"', false],
    ['2^53 + 1 for 2^53', '9007199254740992', '9007199254740993', false],
    ['1e400 for a number', '35', '1e400', false],
  ];
  for (const [what, open, answer, reaches] of spellings) {
    await t.test(`an answer under ${what}`, async (t) => {
      await serverSends(s, [`{"jsonrpc":"2.0","id":${open},"method":"ping"}`]);
      await hostSends(s, `{"jsonrpc":"2.0","id":${answer},"result":{}}`);
      t.equal(answered(s, answer), reaches, reaches ? 'reached the server' : 'dropped');
    });
  }

  await t.test('an answer given twice reaches the server once', async (t) => {
    await serverSends(s, ['{"jsonrpc":"2.0","id":"twice","method":"ping"}']);
    await hostSends(s, '{"jsonrpc":"2.0","id":"twice","result":{}}');
    await hostSends(s, `{"jsonrpc":"2.0","id":"twice","result":${HOST_ROOTS}}`);
    t.equal(s.received().filter((l) => l.includes('"twice"')).length, 1);
  });

  await t.test('answers inside a batch: each as if it came alone', async (t) => {
    await serverSends(s, ['{"jsonrpc":"2.0","id":"b-open","method":"ping"}']);
    await hostSends(
      s,
      `[{"jsonrpc":"2.0","id":"b-open","result":{}},{"jsonrpc":"2.0","id":"b-never","result":${HOST_ROOTS}}]`,
    );
    t.ok(answered(s, '"b-open"'), 'the answer to the open request reached the server');
    t.notOk(answered(s, '"b-never"'), 'the answer to nothing did not');
    t.notOk(
      s.received().some((l) => l.startsWith('[')),
      'no array reached the server',
    );
  });

  await t.test('an answer with both a result and an error goes as one answer', async (t) => {
    await serverSends(s, ['{"jsonrpc":"2.0","id":"both","method":"ping"}']);
    const line = '{"jsonrpc":"2.0","id":"both","result":{},"error":{"code":1,"message":"x"}}';
    await hostSends(s, line);
    await hostSends(s, line);
    t.equal(
      s.received().filter((l) => l.includes('"both"')).length,
      1,
      'it answers the open request once (the server judges its shape)',
    );
  });

  await t.test('an answer after the server cancelled its request is dropped', async (t) => {
    await serverSends(s, [
      '{"jsonrpc":"2.0","id":"gone","method":"ping"}',
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"gone"}}',
    ]);
    await hostSends(s, `{"jsonrpc":"2.0","id":"gone","result":${HOST_ROOTS}}`);
    t.notOk(answered(s, '"gone"'));
  });

  await t.test('an answer under an id the server reused for roots/list is dropped', async (t) => {
    await serverSends(s, [
      '{"jsonrpc":"2.0","id":"reused","method":"ping"}',
      '{"jsonrpc":"2.0","id":"reused","method":"roots/list"}',
    ]);
    await hostSends(s, `{"jsonrpc":"2.0","id":"reused","result":${HOST_ROOTS}}`);
    t.notOk(
      s.received().some((l) => l.includes('"reused"') && l.includes('"file:///"')),
      'the host’s roots never reached the server',
    );
  });

  // The proxy's own requests: a cancellation must not stop its tools/list or ping, nor the
  // host's dialog for the proxy's question.
  for (const id of ['mcp-roots-proxy:1', 'mcp\\u002droots-proxy:2', 'mcp-roots-proxy:ask:1']) {
    await t.test(`the host cancels the proxy’s own request ${id}`, async (t) => {
      await hostSends(
        s,
        `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"${id}"}}`,
      );
      t.notOk(
        s
          .received()
          .some((l) => l.includes('notifications/cancelled') && l.includes('roots-proxy')),
        'the server was not told',
      );
    });
  }
  await t.test('the server cancels the proxy’s question to the host', async (t) => {
    const before = s.hostLines().length;
    await serverSends(s, [
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"mcp-roots-proxy:ask:1"}}',
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"mcp\\u002droots-proxy:ask:2"}}',
    ]);
    t.notOk(
      s
        .hostLines()
        .slice(before)
        .some((l) => l.includes('notifications/cancelled')),
      'the host was not told',
    );
  });

  // A Go host reads these keys without regard to case: its answer would go to the proxy's question.
  const smuggled: [string, string][] = [
    [
      'ID beside id',
      '{"jsonrpc":"2.0","id":"x1","ID":"mcp-roots-proxy:ask:1","method":"elicitation/create","params":{}}',
    ],
    [
      'id twice',
      '{"jsonrpc":"2.0","id":"mcp-roots-proxy:ask:1","id":"x2","method":"elicitation/create","params":{}}',
    ],
    ['Method beside method', '{"jsonrpc":"2.0","id":"x3","method":"ping","Method":"roots/list"}'],
    [
      'RequestId in a cancellation',
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x4","RequestId":"mcp-roots-proxy:ask:1"}}',
    ],
    [
      'params\\u0000 beside params',
      '{"jsonrpc":"2.0","id":"x5","method":"ping","params":{},"params\\u0000":{"x":1}}',
    ],
  ];
  for (const [i, [what, line]] of smuggled.entries()) {
    await t.test(`a server request with ${what} never reaches the host`, async (t) => {
      const before = s.hostLines().length;
      await serverSends(s, [line]);
      const seen = s.hostLines().slice(before);
      t.notOk(
        seen.some((l) => l.includes(`"x${i + 1}"`)),
        `the host saw none of it: ${seen.join('\n')}`,
      );
    });
  }

  await t.test('an answer to the server before a restart does not reach the next', async (t) => {
    await serverSends(s, ['{"jsonrpc":"2.0","id":"before-restart","method":"ping"}']);
    const admin = await d.connect('admin');
    t.teardown(() => admin.close());
    await admin.grant('batches', join(w, 'more'), { seconds: 600 });
    await waitFor(() => s.stderr().includes('restarted the server'), WAIT_MS, 'a restart');
    await hostSends(s, `{"jsonrpc":"2.0","id":"before-restart","result":${HOST_ROOTS}}`);
    t.notOk(answered(s, '"before-restart"'), 'the new server never got it');
  });
});
