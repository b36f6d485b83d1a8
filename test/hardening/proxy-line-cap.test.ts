/**
 * One line's length, in each direction. A line from the host longer than the host cap (10 MiB,
 * what the TypeScript SDK's stdio reader takes) or from the server longer than the server cap
 * (64 MiB: a file read answer can be large) is refused with a JSON-RPC error where its id can be
 * read from its start, and is never held whole: the proxy keeps its first bytes and counts the
 * rest, however long the line runs before its newline.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { lineEnds, lineHead } from '../../proxy/line-head.js';
import { HOST_LINE_CAP, LineSplitter, SERVER_LINE_CAP } from '../../proxy/line-splitter.js';
import { spawnLineChild } from '../helpers/child-lines.js';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, proxyFor, waitFor } from '../helpers/proxy.js';
import { initialize, startFixtureSession, type RawSession } from '../helpers/raw-session.js';
import { fixtureServer, repoPath } from '../helpers/repo.js';

const WAIT_MS = 60_000;
const MIB = 2 ** 20;

/** Write `head`, `bytes` bytes of `x`, `tail` and a newline to the proxy, minding back-pressure. */
async function hostWrites(s: RawSession, head: string, bytes: number, tail: string): Promise<void> {
  const write = async (b: Buffer): Promise<void> => {
    if (!s.child.stdin.write(b)) await new Promise((r) => s.child.stdin.once('drain', r));
  };
  await write(Buffer.from(head));
  const chunk = Buffer.alloc(MIB, 0x78);
  for (let left = bytes; left > 0; left -= MIB) {
    await write(left >= MIB ? chunk : chunk.subarray(0, left));
  }
  await write(Buffer.from(`${tail}\n`));
}

/** The proxy's peak resident memory so far, from /proc. */
function peakRss(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(m?.[1] ?? 0) * 1024;
}

let n = 0;
/** Host calls the server's `send_big`; resolves with the host's answer to the call. */
async function serverBig(s: RawSession, kind: string, bytes: number): Promise<string> {
  const id = `big-${++n}`;
  s.send({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name: 'send_big', arguments: { kind, bytes } },
  });
  return s.line(`"id":"${id}"`, WAIT_MS);
}

void t.test('what the head of a line over the cap says', (t) => {
  const rows: [string, string, { idText?: string; method?: string; answer: boolean }][] = [
    [
      'a request',
      '{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"x":"',
      { idText: '"r1"', method: 'tools/call', answer: false },
    ],
    [
      'params before the id',
      '{"jsonrpc":"2.0","method":"ping","params":{"a":[1,{"b":"}"}]},"id":7,"x":"',
      { idText: '7', method: 'ping', answer: false },
    ],
    ['an escaped id', '{"id":"a\\u0022b","result":{"t":"', { idText: '"a\\u0022b"', answer: true }],
    [
      'the id cut by the head',
      '{"jsonrpc":"2.0","method":"ping","id":"abc',
      { method: 'ping', answer: false },
    ],
    [
      'id twice',
      '{"id":1,"id":2,"method":"ping","params":{"x":"',
      { method: 'ping', answer: false },
    ],
    ['ID beside id', '{"ID":"mcp-roots-proxy:ask:1","id":2,"result":{"x":"', { answer: true }],
    [
      'an error answer',
      '{"jsonrpc":"2.0","id":-3e2,"error":{"message":"',
      { idText: '-3e2', answer: true },
    ],
    ['a null id', '{"jsonrpc":"2.0","id":null,"result":{"x":"', { answer: true }],
    ['not an object', '[{"id":1,"method":"ping"', { answer: false }],
  ];
  for (const [what, head, want] of rows) {
    t.same(lineHead(Buffer.from(head)), { idText: undefined, method: undefined, ...want }, what);
  }
  t.end();
});

void t.test('an id written after the result is read from the line’s end', (t) => {
  const head = Buffer.from('{"result":{"content":[{"type":"text","text":"xxxx');
  const ends: [string, string, string | undefined][] = [
    ['the TypeScript SDK’s order', 'xxxx"}]},"jsonrpc":"2.0","id":7}', '7'],
    ['a string id', 'xxxx"}]},"id":"s-1"}', '"s-1"'],
    ['an id nested in the result', 'xx"}],"id":7}}', undefined],
    ['no id', 'xxxx"}]}}', undefined],
  ];
  for (const [what, tail, idText] of ends) {
    t.equal(lineEnds(head, Buffer.from(tail)).idText, idText, what);
  }
  const both = Buffer.from('{"id":1,"result":{"t":"xx');
  t.equal(lineEnds(both, Buffer.from('xx"},"id":2}')).idText, undefined, 'two ids: nobody’s');
  t.end();
});

void t.test('the splitter holds at most the cap of a line', (t) => {
  const s = new LineSplitter(10);
  t.same(s.push(Buffer.from('0123456789\n01234')), [Buffer.from('0123456789')]);
  const over = s.push(Buffer.from('56789ab'));
  t.same(over, [], 'nothing yet: the line has not ended');
  t.same(s.push(Buffer.from('cd\nnext')), [
    { head: Buffer.from('0123456789abcd'), tail: Buffer.from('0123456789abcd'), bytes: 14 },
  ]);
  t.same(s.end(), Buffer.from('next'));
  t.end();
});

void t.test('line caps', async (t) => {
  t.equal(HOST_LINE_CAP, 10 * MIB);
  t.equal(SERVER_LINE_CAP, 64 * MIB);
  const { s } = await startFixtureSession(t, {
    server: 'caps',
    fixture: fixtureServer('hostile-lines.mjs'),
    mark: 'MARK',
  });
  const call = (id: string) =>
    `{"jsonrpc":"2.0","id":"${id}","method":"tools/call","params":{"name":"hold","arguments":{"pad":"`;

  await t.test('host: a request over the cap is refused under its id', async (t) => {
    await hostWrites(s, call('cap-1'), HOST_LINE_CAP, '"}}}');
    const answer = await s.line('"id":"cap-1"', WAIT_MS);
    t.match(answer, /"code":-32600.*10485760/, answer.slice(0, 400));
    t.notOk(
      s.received().some((l) => l.includes('cap-1')),
      'the server got none of it',
    );
  });

  await t.test('host: a request whose id comes last is refused under it', async (t) => {
    const head =
      '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"hold","arguments":{"pad":"';
    await hostWrites(s, head, HOST_LINE_CAP, '"}},"id":"cap-2"}');
    const answer = await s.line('"id":"cap-2"', WAIT_MS);
    t.match(answer, /"code":-32600/);
    t.notOk(
      s.received().some((l) => l.includes('cap-2')),
      'the server got none of it',
    );
  });

  await t.test('host: a request whose id is neither first nor last: a null id', async (t) => {
    const head =
      '{"jsonrpc":"2.0","method":"tools/call","params":{"name":"hold","arguments":{"pad":"';
    await hostWrites(s, head, HOST_LINE_CAP, `"}},"id":"cap-2b","more":"${'y'.repeat(70_000)}"}`);
    const answer = await s.line('"id":null', WAIT_MS);
    t.match(answer, /"code":-32600/);
    t.notOk(
      s.received().some((l) => l.includes('cap-2b')),
      'the server got none of it',
    );
  });

  await t.test('host: a notification over the cap goes nowhere', async (t) => {
    const head = '{"jsonrpc":"2.0","method":"notifications/cap-3","params":{"pad":"';
    await hostWrites(s, head, HOST_LINE_CAP, '"}}');
    s.send({ jsonrpc: '2.0', id: 'after-3', method: 'ping' });
    await s.line('"id":"after-3"', WAIT_MS);
    t.notOk(
      s.received().some((l) => l.includes('cap-3')),
      'the server got none of it',
    );
    t.match(s.stderr(), /over the .* cap/);
  });

  await t.test('host: a line just under the cap goes through', async (t) => {
    await hostWrites(s, call('cap-4'), HOST_LINE_CAP - 200, '"}}}');
    s.send({
      jsonrpc: '2.0',
      id: 'rel-4',
      method: 'tools/call',
      params: { name: 'release', arguments: {} },
    });
    const answer = await s.line('"id":"cap-4"', WAIT_MS);
    t.match(answer, /released/);
  });

  await t.test('host: 200 MiB without a newline is never held whole', async (t) => {
    const before = peakRss(s.child.pid!);
    await hostWrites(s, call('cap-5'), 200 * MIB, '"}}}');
    await s.line('"id":"cap-5"', WAIT_MS);
    const grown = peakRss(s.child.pid!) - before;
    t.ok(grown < 100 * MIB, `the proxy's peak memory grew by ${Math.round(grown / MIB)} MiB`);
  });

  await t.test('server: an answer over the cap becomes an error answer', async (t) => {
    const answer = await serverBig(s, 'answer', SERVER_LINE_CAP + MIB);
    t.match(answer, /"error".*67108864/, answer.slice(0, 400));
  });

  await t.test('server: a notification over the cap goes nowhere', async (t) => {
    const before = s.hostLines().length;
    const answer = await serverBig(s, 'notification', SERVER_LINE_CAP + MIB);
    t.match(answer, /sent notification/);
    t.notOk(
      s
        .hostLines()
        .slice(before)
        .some((l) => l.includes('notifications/message')),
      'the host saw nothing of it',
    );
  });

  await t.test('server: a request over the cap is refused to the server', async (t) => {
    const answer = await serverBig(s, 'request', SERVER_LINE_CAP + MIB);
    t.match(answer, /sent request/);
    t.notOk(
      s.hostLines().some((l) => l.includes('big-request')),
      'the host saw nothing of it',
    );
    t.ok(
      s.received().some((l) => l.includes('"id":"big-request"') && l.includes('"error"')),
      'the server was told',
    );
  });

  await t.test('server: bytes without a newline past the cap, then more lines', async (t) => {
    const answer = await serverBig(s, 'endless', SERVER_LINE_CAP + 8 * MIB);
    t.match(answer, /sent endless/, 'the session goes on');
  });
});

void t.test('the real filesystem server: a file read past the server cap', async (t) => {
  const dir = ownedShortDir(t);
  const root = join(dir, 'root');
  mkdirSync(root);
  // The server sends a file's text twice in its answer (`content` and `structuredContent`), so
  // a file of half the cap makes a line over it: reading a file of the whole cap costs the
  // server seconds of CPU. Should the server stop repeating the text, the answer comes through
  // whole and the error asserted below is missing: the test fails, it does not pass unseen.
  writeFileSync(join(root, 'big.txt'), Buffer.alloc(SERVER_LINE_CAP / 2 + MIB, 0x78));
  writeFileSync(join(root, 'large.txt'), Buffer.alloc(8 * MIB, 0x79));
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${root}\n`,
    {
      dir,
    },
  );
  const fs = repoPath('node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
  const child = spawnLineChild(
    t,
    proxyFor({ server: 'fs', socket: d.socket }, [process.execPath, fs, root]),
  );
  const s = {
    ...child,
    received: () => [],
    line: async (needle: string, ms = WAIT_MS) => {
      let found: string | undefined;
      await waitFor(
        () => (found = child.lines().find((l) => l.includes(needle))) !== undefined,
        ms,
        `${needle}\n${child.stderr().slice(-1500)}`,
      );
      return found!;
    },
  };
  await initialize({ ...s, hostLines: s.lines });
  const read = (id: string, name: string) =>
    s.send({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'read_text_file', arguments: { path: join(root, name) } },
    });

  read('fs-large', 'large.txt');
  const large = await s.line('"id":"fs-large"');
  t.ok(large.length > 8 * MIB, 'an 8 MiB file comes through whole');
  read('fs-big', 'big.txt');
  const big = await s.line('"id":"fs-big"');
  t.match(big, /"error".*67108864 byte cap/, big.slice(0, 400));
  t.ok(big.length < 10_000, 'and the host gets the error, not the line');
});
