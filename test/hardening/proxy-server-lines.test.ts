/**
 * What a hostile server writes to the host, attacked line by line. A server's line of bytes that
 * are not UTF-8 is read one way by the proxy (U+FFFD) and another by a host's reader (the raw
 * byte, or a decoding error that ends the session): like the host's own, it goes no further, and
 * is never rewritten. An answer reaches the host only for a request the host sent and the server
 * has not answered: not twice, not for an id the host never sent, not for the proxy's own ids,
 * not for a request the host cancelled (whose id the host then may not use again until the
 * server's late answer has come). Each row is checked on what the host and the server got.
 */
import t from 'tap';
import { waitFor } from '../helpers/proxy.js';
import { serverSends, startFixtureSession, type RawSession } from '../helpers/raw-session.js';
import { fixtureServer } from '../helpers/repo.js';

const WAIT_MS = 30_000;
/** `before` + the byte 0xff + `after`: a line that is not UTF-8. */
const notUtf8 = (before: string, after: string): Buffer =>
  Buffer.concat([Buffer.from(before), Buffer.from([0xff]), Buffer.from(after)]);

/** Host calls `tool` under `id` (a JSON text), not waiting for the answer. */
const callTool = (s: RawSession, id: string, tool: string): void =>
  s.send(
    `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${tool}","arguments":{}}}`,
  );

const answersTo = (s: RawSession, idText: string): string[] =>
  s.hostLines().filter((l) => l.includes(`"id":${idText}`) && /"(result|error)"/.test(l));

void t.test('a hostile server’s lines', async (t) => {
  const { s } = await startFixtureSession(t, {
    server: 'lines',
    fixture: fixtureServer('hostile-lines.mjs'),
    mark: 'MARK',
  });

  // [what, the line the server writes, the tag the host must never see]
  const notUtf8Rows: [string, Buffer, string][] = [
    [
      'a request to the host',
      notUtf8(
        '{"jsonrpc":"2.0","id":"u1","method":"elicitation/create","params":{"message":"',
        '"}}',
      ),
      'u1',
    ],
    [
      'a request whose id holds the byte',
      notUtf8('{"jsonrpc":"2.0","id":"u2', '","method":"ping"}'),
      'u2',
    ],
    [
      'a log notification',
      notUtf8(
        '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"u3',
        '"}}',
      ),
      'u3',
    ],
    [
      'a cancellation',
      notUtf8(
        '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"u4',
        '"}}',
      ),
      'u4',
    ],
    [
      'a notification inside a batch',
      notUtf8(
        '[{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"u5',
        '"}}]',
      ),
      'u5',
    ],
    [
      'a surrogate encoded in UTF-8 (CESU-8)',
      Buffer.concat([
        Buffer.from(
          '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"u6',
        ),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from('"}}'),
      ]),
      'u6',
    ],
    [
      'an overlong encoding of "/" (C0 AF)',
      Buffer.concat([
        Buffer.from(
          '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"u7',
        ),
        Buffer.from([0xc0, 0xaf]),
        Buffer.from('"}}'),
      ]),
      'u7',
    ],
  ];
  for (const [what, line, tag] of notUtf8Rows) {
    await t.test(`not UTF-8: ${what} goes no further`, async (t) => {
      const seen = await serverSends(s, [line]);
      t.notOk(
        seen.some((l) => l.includes(tag)),
        `the host saw none of it: ${seen.join('\n')}`,
      );
      t.match(s.stderr(), /not UTF-8/, 'the proxy says why');
    });
  }

  await t.test('not UTF-8: a server request is answered with an error under its id', async (t) => {
    await serverSends(s, []);
    t.ok(
      s.received().some((l) => l.includes('"id":"u1"') && l.includes('"error"')),
      'the server was told',
    );
  });

  await t.test('not UTF-8: an answer to the host’s request becomes an error answer', async (t) => {
    callTool(s, '"h-utf"', 'hold');
    const seen = await serverSends(s, [
      notUtf8(
        '{"jsonrpc":"2.0","id":"h-utf","result":{"content":[{"type":"text","text":"',
        '"}]}}',
      ),
    ]);
    const answer = seen.find((l) => l.includes('"id":"h-utf"')) ?? '';
    t.match(answer, /"error".*not UTF-8/, `an error, not the bytes: ${answer}`);
    t.notOk(answer.includes('\ufffd'), 'nothing of the line rewritten');
  });

  await t.test('not UTF-8: a host batch is refused whole, and reaches nobody', async (t) => {
    const before = s.hostLines().length;
    s.child.stdin.write(
      Buffer.concat([
        notUtf8(
          '[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"hb',
          '"}}]',
        ),
        Buffer.from('\n'),
      ]),
    );
    await s.line('"code":-32700', WAIT_MS);
    t.ok(s.hostLines().length > before);
    t.notOk(
      s.received().some((l) => l.includes('"hb')),
      'the server got nothing',
    );
  });

  // Answers the host must never see: [what, the answer line, the id text it carries]
  const stray: [string, string, string][] = [
    ['an id the host never sent', '{"jsonrpc":"2.0","id":"never-1","result":{}}', '"never-1"'],
    ['a number the host never sent', '{"jsonrpc":"2.0","id":424242,"result":{"x":1}}', '424242'],
    [
      'the host’s initialize again',
      '{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-03-26","capabilities":{},"serverInfo":{"name":"x","version":"1"}}}',
      '0',
    ],
    [
      'the proxy’s own tools/list id',
      '{"jsonrpc":"2.0","id":"mcp-roots-proxy:1","result":{"tools":[]}}',
      '"mcp-roots-proxy:1"',
    ],
    [
      'the proxy’s question to the host',
      '{"jsonrpc":"2.0","id":"mcp-roots-proxy:ask:1","result":{"action":"accept"}}',
      '"mcp-roots-proxy:ask:1"',
    ],
    [
      'an own id, escaped',
      '{"jsonrpc":"2.0","id":"mcp\\u002droots-proxy:9","result":{}}',
      '"mcp\\u002droots-proxy:9"',
    ],
    [
      'a null id',
      '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"stray-null"}}',
      'null',
    ],
  ];
  for (const [what, line, idText] of stray) {
    await t.test(`an answer to ${what} never reaches the host`, async (t) => {
      const before = answersTo(s, idText).length;
      const seen = await serverSends(s, [line]);
      t.equal(
        answersTo(s, idText).length,
        before,
        `nothing new under ${idText}: ${seen.join('\n')}`,
      );
    });
  }

  // An answer whose envelope two readers read differently: a first-wins host takes the first id
  // (one the proxy refused, or never saw answered), while the proxy matched the last.
  const twoFaced: [string, string][] = [
    ['id twice', '{"jsonrpc":"2.0","id":"forged-1","id":"open-1","result":{"content":[]}}'],
    ['ID beside id', '{"jsonrpc":"2.0","ID":"forged-2","id":"open-2","result":{"content":[]}}'],
    [
      'Result beside error',
      '{"jsonrpc":"2.0","id":"open-3","error":{"code":1,"message":"m"},"Result":{"forged-3":1}}',
    ],
    ['_id beside id', '{"jsonrpc":"2.0","_id":"forged-4","id":"open-4","result":{}}'],
  ];
  for (const [i, [what, line]] of twoFaced.entries()) {
    await t.test(`an answer with ${what} never reaches the host`, async (t) => {
      const open = `open-${i + 1}`;
      callTool(s, `"${open}"`, 'hold');
      const seen = await serverSends(s, [line]);
      t.notOk(
        seen.some((l) => l.includes(`forged-${i + 1}`)),
        `the host saw none of it: ${seen.join('\n')}`,
      );
      const answer = answersTo(s, `"${open}"`)[0] ?? '';
      t.match(answer, /"error".*spelled exactly/, `the open request got an error: ${answer}`);
    });
  }

  await t.test('a second answer to one request never reaches the host', async (t) => {
    callTool(s, '"twice"', 'hold');
    await serverSends(s, [
      '{"jsonrpc":"2.0","id":"twice","result":{"content":[{"type":"text","text":"first"}]}}',
    ]);
    await serverSends(s, [
      '{"jsonrpc":"2.0","id":"twice","result":{"content":[{"type":"text","text":"second"}]}}',
    ]);
    callTool(s, '"rel-1"', 'release');
    await s.line('"id":"rel-1"', WAIT_MS);
    const answers = answersTo(s, '"twice"');
    t.equal(answers.length, 1, answers.join('\n'));
    t.match(answers[0] ?? '', /first/);
  });

  await t.test(
    'an answer under another spelling of an open id never reaches the host',
    async (t) => {
      callTool(s, '"Spelled"', 'hold');
      await serverSends(s, [
        '{"jsonrpc":"2.0","id":"spelled","result":{}}',
        '{"jsonrpc":"2.0","id":"SPELLED","result":{}}',
      ]);
      t.equal(answersTo(s, '"spelled"').length + answersTo(s, '"SPELLED"').length, 0);
      callTool(s, '"rel-2"', 'release');
      await s.line('"id":"rel-2"', WAIT_MS);
      t.equal(answersTo(s, '"Spelled"').length, 1, 'the real answer came');
    },
  );

  await t.test(
    'a request cancelled at the server: its id is not reused before the late answer',
    async (t) => {
      callTool(s, '"c1"', 'hold');
      // The call has reached the server once another call behind it is answered.
      await serverSends(s, []);
      s.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1"}}');
      s.send('{"jsonrpc":"2.0","id":"c1","method":"ping"}');
      const refused = await s.line('"id":"c1"', WAIT_MS);
      t.match(refused, /"code":-32600.*cancelled/, `reuse refused: ${refused}`);
      callTool(s, '"rel-3"', 'release');
      await s.line('"id":"rel-3"', WAIT_MS);
      t.equal(answersTo(s, '"c1"').length, 1, 'the server’s late answer was dropped');
      s.send('{"jsonrpc":"2.0","id":"c1","method":"ping"}');
      await waitForCount(s, '"c1"', 2);
      t.match(answersTo(s, '"c1"')[1] ?? '', /"result":\{\}/, 'after it, the id is free again');
    },
  );

  await t.test('two requests in flight under one id: the second is refused', async (t) => {
    callTool(s, '"d1"', 'hold');
    await serverSends(s, []);
    s.send('{"jsonrpc":"2.0","id":"d1","method":"ping"}');
    const refused = await s.line('"id":"d1"', WAIT_MS);
    t.match(refused, /"code":-32600/);
    t.equal(
      s.received().filter((l) => l.includes('"id":"d1"')).length,
      1,
      'the server got the first only',
    );
    callTool(s, '"rel-4"', 'release');
    await s.line('"id":"rel-4"', WAIT_MS);
    t.equal(answersTo(s, '"d1"').length, 2, 'the refusal, then the first request’s answer');
  });
});

async function waitForCount(s: RawSession, idText: string, count: number): Promise<void> {
  await waitFor(
    () => answersTo(s, idText).length >= count,
    WAIT_MS,
    `${count} answers to ${idText}`,
  );
}
