/**
 * The opening request of a restarted server, read off its output before the router listens:
 * whatever else the server writes (before the answer, after it in the same chunk, a line cut in
 * two) reaches the router unchanged and in order, and an output that ends still ends for it.
 */
import { PassThrough } from 'node:stream';
import t from 'tap';
import { openServer } from '../../proxy/server-opening.js';

const ANSWER_ID = '"mcp-roots-proxy:opening"';

/** A server on two stream pairs; `sent` resolves with the first line the proxy wrote to it. */
function fakeServer() {
  const serverIn = new PassThrough();
  const serverOut = new PassThrough();
  const sent = new Promise<string>((resolve) =>
    serverIn.once('data', (c: Buffer) => resolve(c.toString())),
  );
  return { server: { serverIn, serverOut }, serverOut, sent };
}

/** Everything the output holds for the router, read to its end or until `lines` lines came. */
async function drain(out: NodeJS.ReadableStream, lines?: number): Promise<string> {
  let text = '';
  return new Promise((resolve) => {
    out.on('data', (c: Buffer) => {
      text += c.toString();
      if (lines !== undefined && text.split('\n').length - 1 >= lines) resolve(text);
    });
    out.on('end', () => resolve(text));
    out.resume();
  });
}

void t.test('the answer is taken, every other byte is left for the router in order', async (t) => {
  // [what, the chunks the server writes, what the router must read]
  const log = '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info"}}';
  const ask = '{"jsonrpc":"2.0","id":7,"method":"roots/list"}';
  const answer = `{"jsonrpc":"2.0","id":${ANSWER_ID},"result":{"capabilities":{"tools":{}}}}`;
  const cases: [string, string[], string][] = [
    ['the answer alone', [`${answer}\n`], ''],
    ['a line before it', [`${log}\n`, `${answer}\n`], `${log}\n`],
    ['a line after it in the same chunk', [`${answer}\n${ask}\n`], `${ask}\n`],
    ['before and after, one chunk', [`${log}\n${answer}\n${ask}\n`], `${log}\n${ask}\n`],
    [
      'a line cut in two around the answer',
      [`${log.slice(0, 9)}`, `${log.slice(9)}\n${answer}\n${ask.slice(0, 5)}`],
      `${log}\n${ask.slice(0, 5)}`,
    ],
    ['an answer byte by byte', [...`${answer}\n`], ''],
  ];
  for (const [what, chunks, rest] of cases) {
    const f = fakeServer();
    const opened = openServer(
      f.server,
      'initialize',
      { protocolVersion: '2025-06-18' },
      {
        timeoutMs: 30_000,
      },
    );
    t.match(JSON.parse(await f.sent), { id: 'mcp-roots-proxy:opening', method: 'initialize' });
    for (const c of chunks) f.serverOut.write(c);
    const { answer: got, server } = await opened;
    t.same(got, { result: { capabilities: { tools: {} } } }, `${what}: the result`);
    t.equal(server.serverOut, f.serverOut, `${what}: the same output`);
    const later = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n';
    f.serverOut.end(later);
    t.equal(
      await drain(server.serverOut),
      rest + later,
      `${what}: the rest, then what comes later`,
    );
  }
});

void t.test('an error, an end and silence each come back as an error', async (t) => {
  const f = fakeServer();
  const opened = openServer(f.server, 'server/discover', {}, { timeoutMs: 30_000 });
  f.serverOut.write(`{"jsonrpc":"2.0","id":${ANSWER_ID},"error":{"code":-32601,"message":"no"}}\n`);
  const r1 = await opened;
  t.match('error' in r1.answer && r1.answer.error.message, /server\/discover answered: no/);

  const g = fakeServer();
  const ending = openServer(g.server, 'initialize', {}, { timeoutMs: 30_000 });
  g.serverOut.end('{"jsonrpc":"2.0","method":"notifications/message"}\n');
  const r2 = await ending;
  t.match('error' in r2.answer && r2.answer.error.message, /ended before it answered initialize/);
  t.not(r2.server.serverOut, g.serverOut, 'an ended output is replaced');
  t.equal(
    await drain(r2.server.serverOut),
    '{"jsonrpc":"2.0","method":"notifications/message"}\n',
    'which holds what the server wrote, then ends',
  );

  const h = fakeServer();
  const silent = await openServer(h.server, 'initialize', {}, { timeoutMs: 1 });
  t.match(
    'error' in silent.answer && silent.answer.error.message,
    /no answer to initialize in 1 ms/,
  );
  h.serverOut.end('{"late":1}\n');
  t.equal(
    await drain(silent.server.serverOut, 1),
    '{"late":1}\n',
    'a late line still reaches the router',
  );

  // A change during a restart ends the wait for the new server's answer at once.
  const stop = new AbortController();
  const k = fakeServer();
  const stopped = openServer(k.server, 'initialize', {}, { timeoutMs: 30_000, stop: stop.signal });
  stop.abort();
  const r3 = await stopped;
  t.match(
    'error' in r3.answer && r3.answer.error.message,
    /a change came before the new server answered initialize/,
  );
  const already = await openServer(
    fakeServer().server,
    'server/discover',
    {},
    {
      timeoutMs: 30_000,
      stop: stop.signal,
    },
  );
  t.ok('error' in already.answer, 'aborted before: answered at once');
});
