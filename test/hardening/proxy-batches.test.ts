/**
 * JSON-RPC batches (a line that is a JSON array) through the real proxy and a real daemon, from
 * both sides. MCP 2025-06-18 removed batches, so the proxy refuses every batched host request
 * (one error per request, answered as a batch) and never writes an array to the server; a
 * server's batch is taken apart and each element is handled as if it had come alone (its
 * roots/list is answered with the policy's roots, never the host's). A row passes when the host
 * gets the answer given and the server received no array and none of the row's requests.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { FS_SERVER, ownedShortDir, proxyCommand, waitFor } from '../helpers/proxy.js';
import { spawnLineChild } from '../helpers/child-lines.js';
import { startFixtureSession } from '../helpers/raw-session.js';
import { fixtureServer } from '../helpers/repo.js';

const MARK = 'MARK-FORBIDDEN';
/** Generous: the machine running the tests may be loaded. */
const WAIT_MS = 30_000;

const call = (id: string | number, name: string, args: object = {}): object => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

interface Row {
  /** The line the host writes. */
  line: (w: string) => string;
  /** The text that marks this row's requests in what the server received (none may arrive). */
  marks: string[];
  /** Each element of the array the host must get back: its id text and error code. */
  answer: { id: string; code: number }[];
}

const REFUSED = -32600;

const ROWS: [string, Row][] = [
  [
    'one call outside every root',
    {
      line: (w) => JSON.stringify([call('b1', 'read_it', { path: `${w}/out/o.txt` })]),
      marks: ['"b1"'],
      answer: [{ id: '"b1"', code: REFUSED }],
    },
  ],
  [
    'an allowed call and a ping: refused all the same',
    {
      line: (w) =>
        JSON.stringify([
          call('b2', 'read_it', { path: `${w}/in/a.txt` }),
          { jsonrpc: '2.0', id: 'b3', method: 'ping' },
        ]),
      marks: ['"b2"', '"b3"'],
      answer: [
        { id: '"b2"', code: REFUSED },
        { id: '"b3"', code: REFUSED },
      ],
    },
  ],
  [
    'an id above 2^53 and odd spacing survive in the refusal',
    {
      line: (w) =>
        ` [ {"jsonrpc":"2.0", "id":12345678901234567890,"method":"tools/call","params":{"name":"read_it","arguments":{"path":"${w}/out/o.txt"}}} ]`,
      marks: ['12345678901234567890'],
      answer: [{ id: '12345678901234567890', code: REFUSED }],
    },
  ],
  [
    'a request smuggled among notifications',
    {
      line: (w) =>
        JSON.stringify([
          { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'x' } },
          call('b4', 'read_it', { path: `${w}/out/o.txt` }),
        ]),
      marks: ['"b4"'],
      answer: [{ id: '"b4"', code: REFUSED }],
    },
  ],
  ['an empty batch', { line: () => '[]', marks: [], answer: [{ id: 'null', code: REFUSED }] }],
  [
    'elements that are not messages, and a nested batch',
    {
      line: (w) => `[1,"x",null,[${JSON.stringify(call('b5', 'read_it', { path: `${w}/out` }))}]]`,
      marks: ['"b5"'],
      answer: [
        { id: 'null', code: REFUSED },
        { id: 'null', code: REFUSED },
        { id: 'null', code: REFUSED },
        { id: 'null', code: REFUSED },
      ],
    },
  ],
];

void t.test('batches with a fixture server that speaks them', async (t) => {
  const { s, w } = await startFixtureSession(t, {
    server: 'batches',
    fixture: fixtureServer('batches.mjs'),
    mark: MARK,
    files: { 'in/a.txt': 'a ok' },
  });

  let n = 0;
  for (const [name, row] of ROWS) {
    await t.test(`host batch: ${name}`, async (t) => {
      const before = s.hostLines().length;
      s.send(row.line(w));
      // A ping after the batch: once its answer is back, the batch was handled.
      const pingId = `after-${++n}`;
      s.send({ jsonrpc: '2.0', id: pingId, method: 'ping' });
      await s.line(`"${pingId}"`, WAIT_MS);
      const arrays = s
        .hostLines()
        .slice(before)
        .filter((l) => l.startsWith('['));
      t.equal(arrays.length, 1, 'one array answers the batch');
      const got = JSON.parse(arrays[0] ?? '[]') as { id: unknown; error?: { code: number } }[];
      t.same(
        got.map((e) => e.error?.code),
        row.answer.map((a) => a.code),
        'one refusal per request',
      );
      for (const a of row.answer) t.ok(arrays[0]?.includes(`"id":${a.id}`), `id ${a.id} answered`);
      const received = s.received();
      t.notOk(
        received.some((l) => l.trimStart().startsWith('[')),
        'no array reached the server',
      );
      for (const mark of row.marks)
        t.notOk(
          received.some((l) => l.includes(mark)),
          `${mark} never reached the server`,
        );
      t.notOk(
        s.hostLines().some((l) => l.includes(MARK)),
        'nothing forbidden came back',
      );
    });
  }

  await t.test('host batch: notifications and answers go on alone', async (t) => {
    s.send(
      JSON.stringify([
        { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'alone' } },
      ]),
    );
    await waitFor(
      () => s.received().some((l) => l.includes('"alone"') && l.startsWith('{')),
      WAIT_MS,
      'the notification on its own line',
    );
    t.notOk(
      s.hostLines().some((l) => l.startsWith('[') && l.includes('alone')),
      'a batch without requests gets no answer',
    );
  });

  await t.test('a cancel of a refused batched request stays with the proxy', async (t) => {
    s.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'b1' } });
    s.send({ jsonrpc: '2.0', id: 'after-cancel', method: 'ping' });
    await s.line('"after-cancel"', WAIT_MS);
    t.notOk(
      s.received().some((l) => l.includes('"requestId":"b1"')),
      'the server never heard of b1',
    );
  });

  await t.test('invalid JSON that starts like a batch reaches nobody', async (t) => {
    const before = s.received().length;
    s.send(`[${JSON.stringify(call('b6', 'read_it', { path: `${w}/out/o.txt` }))}`);
    await s.line('-32700', WAIT_MS);
    s.send({ jsonrpc: '2.0', id: 'after-bad', method: 'ping' });
    await s.line('"after-bad"', WAIT_MS);
    t.notOk(
      s
        .received()
        .slice(before)
        .some((l) => l.includes('"b6"')),
      'the broken batch never reached the server',
    );
  });

  await t.test('server batch: each element is handled alone', async (t) => {
    s.send(call('sb', 'batch_roots'));
    const answer = await s.line('batched answer', WAIT_MS);
    t.match(answer, /^\{"jsonrpc":"2\.0","id":"sb","result"/, 'the answer arrives on its own');
    await s.line('batched note', WAIT_MS);
    const seen = await s.line('roots seen:', WAIT_MS);
    t.ok(seen.includes(`${w}/in`), 'the server got the policy’s roots');
    t.notOk(seen.includes(`${w}/out`), 'and nothing outside them');
    t.notOk(
      s.hostLines().some((l) => l.includes('batched-roots')),
      'the batched roots/list never reached the host',
    );
    t.notOk(
      s.hostLines().some((l) => l.startsWith('[{"jsonrpc":"2.0","id":"sb"')),
      'no array',
    );
  });

  s.child.stdin.end();
  await s.exit;
});

void t.test('batches with the real filesystem server', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'in'), { recursive: true });
  mkdirSync(join(w, 'out'));
  writeFileSync(join(w, 'out/o.txt'), MARK);
  writeFileSync(join(w, 'in/a.txt'), 'a ok');
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${w}/in\n`,
    { dir },
  );
  const { command, args, env } = proxyCommand(
    ['--server', 'fs', '--socket', d.socket],
    [process.execPath, FS_SERVER],
  );
  const { child, lines, send, exit } = spawnLineChild(t, { command, args, env });
  const line = async (needle: string): Promise<string> => {
    await waitFor(() => lines().some((l) => l.includes(needle)), WAIT_MS, `a line with ${needle}`);
    return lines().find((l) => l.includes(needle))!;
  };
  send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: '2025-03-26',
      capabilities: {},
      clientInfo: { name: 'host', version: '1' },
    },
  });
  await line('"id":0');
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  // Wait until the server has its roots: an allowed read alone succeeds.
  await waitFor(
    async () => {
      const id = `probe-${Math.random()}`;
      send(call(id, 'read_text_file', { path: `${w}/in/a.txt` }));
      const got = await line(`"${id}"`);
      return got.includes('a ok');
    },
    WAIT_MS,
    'the server has its roots',
  );
  for (const [name, batch] of [
    ['a read outside every root', [call('f1', 'read_text_file', { path: `${w}/out/o.txt` })]],
    [
      'a read among allowed ones',
      [
        call('f2', 'read_text_file', { path: `${w}/in/a.txt` }),
        call('f3', 'read_multiple_files', { paths: [`${w}/in/a.txt`, `${w}/out/o.txt`] }),
      ],
    ],
  ] as const) {
    await t.test(name, async (t) => {
      send(JSON.stringify(batch));
      const answer = await line(`"id":"${(batch[0] as { id: string }).id}"`);
      t.ok(answer.startsWith('['), 'answered as a batch');
      const got = JSON.parse(answer) as { error?: { code: number } }[];
      t.equal(got.length, batch.length);
      t.ok(
        got.every((e) => e.error?.code === REFUSED),
        'every request refused',
      );
      t.notOk(
        lines().some((l) => l.includes(MARK)),
        'nothing forbidden came back',
      );
    });
  }
  child.stdin.end();
  await exit;
});
