/**
 * Lines that two JSON readers read differently. The proxy checks what `JSON.parse` reads (the
 * last of a repeated key, keys compared exactly); the server may read another message in the
 * same bytes: a reader that keeps the first of a repeated key (cJSON, several Go and C readers),
 * Go's `encoding/json` (and the Go MCP SDK before 1.3.1), which matches keys without regard to
 * case and folds `ſ` to `s` and `K` to `k`, a reader that took a key with a NUL appended for the
 * key itself (the Go SDK up to 1.4.0), a reader that executes a `tools/call` without an id, one
 * that reads bytes that are not UTF-8 as something else, and Python, which opens a path with a
 * lone surrogate `\udcff` as the raw byte 0xff. Every row is a host line the server must never
 * receive: each carries a tag that would show in what the server got.
 */
import { symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import t from 'tap';
import { startFixtureSession } from '../helpers/raw-session.js';
import { fixtureServer } from '../helpers/repo.js';

const WAIT_MS = 30_000;
const MARK = 'MARK-FORBIDDEN';
const INVALID = -32600;
const PARSE = -32700;

interface Row {
  /** The host line as text (or bytes, for lines that are not UTF-8); `in`/`out` are paths. */
  line: (p: { in: string; out: string; tag: string }) => string | Buffer;
  /** The error code the host gets; undefined when a tool result with isError answers instead. */
  code: number | undefined;
  /** False when the proxy cannot tell the line's id: the host's answer comes with a null id. */
  byId?: false;
}

const call = (tag: string, params: string, id = `"${tag}"`): string =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":${params}}`;
const read = (path: string): string => `{"name":"read_it","arguments":{"path":"${path}"}}`;

const ROWS: [string, Row][] = [
  // Repeated keys: JSON.parse keeps the last, a first-wins reader the first.
  [
    'method twice: a ping to the proxy, a call to a first-wins reader',
    {
      line: (p) =>
        `{"jsonrpc":"2.0","id":"${p.tag}","method":"tools/call","params":${read(p.out)},"method":"ping"}`,
      code: INVALID,
    },
  ],
  [
    'params twice: the second names a file inside the root',
    {
      line: (p) =>
        `{"jsonrpc":"2.0","id":"${p.tag}","method":"tools/call","params":${read(p.out)},"params":${read(p.in)}}`,
      code: INVALID,
    },
  ],
  [
    'arguments twice',
    {
      line: (p) =>
        call(
          p.tag,
          `{"name":"read_it","arguments":{"path":"${p.out}"},"arguments":{"path":"${p.in}"}}`,
        ),
      code: INVALID,
    },
  ],
  [
    'path twice',
    {
      line: (p) =>
        call(p.tag, `{"name":"read_it","arguments":{"path":"${p.out}","path":"${p.in}"}}`),
      code: INVALID,
    },
  ],
  [
    'name twice',
    {
      line: (p) =>
        call(p.tag, `{"name":"read_it","name":"batch_roots","arguments":{"path":"${p.in}"}}`),
      code: INVALID,
    },
  ],
  [
    'id twice',
    {
      line: (p) => `{"jsonrpc":"2.0","id":"${p.tag}","id":"mcp-roots-proxy:ask:1","method":"ping"}`,
      code: INVALID,
      byId: false,
    },
  ],
  [
    'a repeated key spelled with an escape (\\u0070ath)',
    {
      line: (p) =>
        call(p.tag, `{"name":"read_it","arguments":{"path":"${p.out}","\\u0070ath":"${p.in}"}}`),
      code: INVALID,
    },
  ],
  // Keys Go's encoding/json reads as the same member (case, ſ, K).
  [
    'Params after params (last wins, without regard to case)',
    {
      line: (p) =>
        `{"jsonrpc":"2.0","id":"${p.tag}","method":"tools/call","params":${read(p.in)},"Params":${read(p.out)}}`,
      code: INVALID,
    },
  ],
  [
    'Params alone',
    {
      line: (p) =>
        `{"jsonrpc":"2.0","id":"${p.tag}","method":"tools/call","Params":${read(p.out)}}`,
      code: INVALID,
    },
  ],
  [
    'METHOD beside method',
    {
      line: (p) =>
        `{"jsonrpc":"2.0","id":"${p.tag}","method":"ping","METHOD":"tools/call","params":${read(p.out)}}`,
      code: INVALID,
    },
  ],
  [
    'Arguments alone',
    {
      line: (p) => call(p.tag, `{"name":"read_it","Arguments":{"path":"${p.out}"}}`),
      code: INVALID,
    },
  ],
  [
    'Name beside name',
    {
      line: (p) =>
        call(p.tag, `{"name":"batch_roots","Name":"read_it","arguments":{"path":"${p.in}"}}`),
      code: INVALID,
    },
  ],
  [
    'paramſ (long s) alone',
    {
      line: (p) =>
        `{"jsonrpc":"2.0","id":"${p.tag}","method":"tools/call","param\u017f":${read(p.out)}}`,
      code: INVALID,
    },
  ],
  [
    'argumentſ (long s, escaped) alone',
    {
      line: (p) => call(p.tag, `{"name":"read_it","argument\\u017f":{"path":"${p.out}"}}`),
      code: INVALID,
    },
  ],
  [
    'Id: a notification to the proxy, a request to Go',
    {
      line: (p) =>
        `{"jsonrpc":"2.0","Id":"${p.tag}","method":"tools/call","params":${read(p.out)}}`,
      code: INVALID,
      byId: false,
    },
  ],
  [
    'path and PATH in arguments',
    {
      line: (p) =>
        call(p.tag, `{"name":"read_it","arguments":{"path":"${p.in}","PATH":"${p.out}"}}`),
      code: INVALID,
    },
  ],
  [
    'path and a Kelvin-sign twin in a nested object',
    {
      line: (p) =>
        call(
          p.tag,
          `{"name":"read_it","arguments":{"path":"${p.in}","opts":{"kind":"a","\u212Aind":"b"}}}`,
        ),
      code: INVALID,
    },
  ],
  // A key with NUL appended: one Go SDK reader took "method\u0000" for "method".
  [
    'method\\u0000 beside method',
    {
      line: (p) =>
        `{"jsonrpc":"2.0","id":"${p.tag}","method":"ping","method\\u0000":"tools/call","params":${read(p.out)}}`,
      code: INVALID,
    },
  ],
  [
    'params\\u0000 alone',
    {
      line: (p) =>
        `{"jsonrpc":"2.0","id":"${p.tag}","method":"tools/call","params\\u0000":${read(p.out)}}`,
      code: INVALID,
    },
  ],
  // A request method without an id: never checked, so never relayed.
  [
    'tools/call as a notification',
    {
      line: (p) =>
        `{"jsonrpc":"2.0","method":"tools/call","params":${read(p.out)},"tag":"${p.tag}"}`,
      code: INVALID,
      byId: false,
    },
  ],
  [
    'resources/read as a notification',
    {
      line: (p) =>
        `{"jsonrpc":"2.0","method":"resources/read","params":{"uri":"file://${p.out}"},"tag":"${p.tag}"}`,
      code: INVALID,
      byId: false,
    },
  ],
  // Bytes and code points another reader takes differently.
  [
    'a byte that is not UTF-8 in a path (the link named 0xff leads out)',
    {
      line: (p) =>
        Buffer.concat([
          Buffer.from(
            `{"jsonrpc":"2.0","id":"${p.tag}","method":"tools/call","params":{"name":"read_it","arguments":{"path":"${dirname(p.in)}/`,
          ),
          Buffer.from([0xff]),
          Buffer.from('"}}}'),
        ]),
      code: PARSE,
      byId: false,
    },
  ],
  [
    'a lone surrogate \\udcff in a path (Python opens the byte 0xff)',
    {
      line: (p) => call(p.tag, read(`${p.in}/\\udcff`)),
      code: undefined,
    },
  ],
  [
    'a lone high surrogate \\ud800 in a path',
    {
      line: (p) => call(p.tag, read(`${p.in}/\\ud800x`)),
      code: undefined,
    },
  ],
  [
    'a byte-order mark before the object',
    { line: (p) => `\uFEFF${call(p.tag, read(p.out))}`, code: PARSE, byId: false },
  ],
  [
    'two objects split by a bare CR (a reader with universal newlines sees two lines)',
    {
      line: (p) => `${call(p.tag, read(p.in))}\r${call(`${p.tag}b`, read(p.out))}`,
      code: PARSE,
      byId: false,
    },
  ],
];

/** Rows of a policy `tools:` entry: exactly `location` is a path, compared as a server compares it. */
const DECLARED: [string, string][] = [
  ['LOCATION instead of location', '{"LOCATION":"OUT"}'],
  ['Location beside location', '{"location":"IN","Location":"OUT"}'],
  ['locat\\u0130on: a dotted capital I, which Go folds to i', '{"locat\\u0130on":"OUT"}'],
];

/** Names that are path-like to a reader that folds `ſ` to `s`. */
const FOLDED_NAMES: [string, string][] = [
  ['ſource with a relative path', '{"\u017fource":"notes/secret.txt"}'],
  ['deſt with a relative path', '{"de\u017ft":"notes/secret.txt"}'],
];

void t.test('host lines two readers read differently never reach the server', async (t) => {
  const { s, w } = await startFixtureSession(t, {
    server: 'batches',
    fixture: fixtureServer('batches.mjs'),
    mark: MARK,
    // What a reader that keeps the byte 0xff would open.
    prepare: (w) =>
      symlinkSync(join(w, 'out/o.txt'), Buffer.from([...Buffer.from(`${w}/in/`), 0xff])),
    policy: '    tools:\n      fetch_it:\n        paths: [location]\n',
    answered: '"batches"',
  });

  let n = 0;
  /** Send `line`, then a ping; resolves once the ping's answer shows the line was handled. */
  /**
   * Send `line`; resolves once the host has the answer to `id` (a checked call may be relayed
   * after later lines), or with no id, once a ping sent after it is answered.
   */
  const settle = async (line: string | Buffer, id?: string): Promise<string[]> => {
    const before = s.hostLines().length;
    s.child.stdin.write(Buffer.concat([Buffer.from(line), Buffer.from('\n')]));
    if (id !== undefined) {
      await s.line(`"id":"${id}"`, WAIT_MS);
    } else {
      const ping = `after-${++n}`;
      s.send({ jsonrpc: '2.0', id: ping, method: 'ping' });
      await s.line(`"${ping}"`, WAIT_MS);
    }
    return s.hostLines().slice(before);
  };
  const paths = (tag: string): { in: string; out: string; tag: string } => ({
    in: `${w}/in/${tag}.txt`,
    out: `${w}/out/o.txt`,
    tag,
  });

  for (const [i, [name, row]] of ROWS.entries()) {
    await t.test(name, async (t) => {
      const tag = `k${i}`;
      const answers = await settle(row.line(paths(tag)), row.byId === false ? undefined : tag);
      t.notOk(
        s.received().some((l) => l.includes(`"${tag}`)),
        'the server received none of it',
      );
      if (row.code === undefined) {
        t.ok(
          answers.some((l) => l.includes(`"${tag}"`) && l.includes('"isError":true')),
          `the host is told the call was refused: ${answers.join('\n')}`,
        );
      } else {
        t.ok(
          answers.some((l) => l.includes(`"code":${row.code}`)),
          `the host is answered ${row.code}: ${answers.join('\n')}`,
        );
      }
    });
  }

  for (const [i, [name, args]] of [...DECLARED, ...FOLDED_NAMES].entries()) {
    await t.test(`arguments: ${name}`, async (t) => {
      const tag = `a${i}`;
      const text = args.replace('IN', `${w}/in/a.txt`).replace('OUT', `${w}/out/o.txt`);
      const tool = i < DECLARED.length ? 'fetch_it' : 'read_it';
      await settle(call(tag, `{"name":"${tool}","arguments":${text}}`), tag);
      t.notOk(
        s.received().some((l) => l.includes(`"${tag}"`)),
        'the server received none of it',
      );
    });
  }

  await t.test('an ordinary call still goes through', async (t) => {
    await settle(call('plain', read(`${w}/in/a.txt`)), 'plain');
    t.ok(
      s.received().some((l) => l.includes('"plain"')),
      'the server received it',
    );
  });
});
