/**
 * The members MCP 2026-07-28 added to a request's envelope, spelled so that a loose reader takes
 * them for the real ones while the proxy, reading exactly, does not: `inputResponses` and
 * `requestState` (a retry after an `input_required` answer, where the proxy puts the policy's
 * roots in place of the host's), the `subscriptions/listen` filter `notifications`, and the
 * `io.modelcontextprotocol/…` members of `_meta` (the per-request protocol version, client
 * capabilities, client info and log level; a stream's subscription id). Each is refused like the
 * 2025 members' spellings. Through the proxy, a 2026-07-28 session's retry carrying the host's
 * own roots under `InputResponses` never reaches the server.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { initialize, startRawSession } from '../helpers/raw-session.js';
import { fixtureServer } from '../helpers/repo.js';
import { McpLine } from '../../proxy/mcp-line.js';
import { unreadableHostLine, unreadableServerLine } from '../../proxy/unreadable-line.js';

const hostLine = (text: string) => unreadableHostLine(new McpLine(Buffer.from(text, 'utf8')));
const serverLine = (text: string) => unreadableServerLine(new McpLine(Buffer.from(text, 'utf8')));

const META =
  '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{}}}';
const HOST_ROOTS = '{"roots":[{"uri":"file:///"}]}';
const call = (params: string, id = 7): string =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"roots","arguments":{},${META},${params}}}`;

const REFUSED: [string, string][] = [
  ['InputResponses', call(`"InputResponses":{"r":${HOST_ROOTS}}`)],
  ['input_responses', call(`"input_responses":{"r":${HOST_ROOTS}}`)],
  ['inputResponſes (long s)', call(`"inputResponſes":{"r":${HOST_ROOTS}}`)],
  [
    'inputResponses beside InputResponses',
    call(`"inputResponses":{},"InputResponses":{"r":${HOST_ROOTS}}`),
  ],
  ['RequestState', call('"inputResponses":{},"RequestState":"s"')],
  ['request_state', call('"inputResponses":{},"request_state":"s"')],
  ['Roots inside an input response', call(`"inputResponses":{"r":{"Roots":[{"uri":"file:///"}]}}`)],
  [
    '__proto__ among the input responses',
    call(`"inputResponses":{"__proto__":{"where":${HOST_ROOTS}}},"requestState":"state-roots"`),
  ],
  [
    '__proto__ in an input response',
    call(`"inputResponses":{"where":{"__proto__":${HOST_ROOTS}}}`),
  ],
  ['__proto__ in params', call(`"__proto__":{"inputResponses":{"where":${HOST_ROOTS}}}`)],
  [
    'roots beside ROOTS in an input response',
    call(`"inputResponses":{"r":{"roots":[],"ROOTS":[{"uri":"file:///"}]}}`),
  ],
  [
    'Notifications in subscriptions/listen',
    `{"jsonrpc":"2.0","id":8,"method":"subscriptions/listen","params":{${META},"Notifications":{"toolsListChanged":true}}}`,
  ],
  [
    'IO.modelcontextprotocol/clientCapabilities',
    '{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","IO.modelcontextprotocol/clientCapabilities":{"roots":{}}}}}',
  ],
  [
    'io.modelcontextprotocol/ClientCapabilities beside the exact key',
    '{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/ClientCapabilities":{"roots":{}}}}}',
  ],
  [
    'io.modelcontextprotocol/protocol_version',
    '{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocol_version":"2025-06-18"}}}',
  ],
  [
    'io.modelcontextprotocol/LogLevel',
    '{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/LogLevel":"debug"}}}',
  ],
  [
    'Level in logging/setLevel',
    '{"jsonrpc":"2.0","id":9,"method":"logging/setLevel","params":{"Level":"debug"}}',
  ],
];

const SERVER_REFUSED: [string, string][] = [
  [
    'a stream notification with IO.modelcontextprotocol/subscriptionId',
    '{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"IO.modelcontextprotocol/subscriptionId":1}}}',
  ],
  [
    'an acknowledgement with Notifications',
    '{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":1},"Notifications":{}}}',
  ],
];

const FINE: string[] = [
  call(`"inputResponses":{"r":${HOST_ROOTS},"Other":{"action":"accept"}},"requestState":"s"`),
  `{"jsonrpc":"2.0","id":8,"method":"subscriptions/listen","params":{${META},"notifications":{"toolsListChanged":true}}}`,
  '{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","com.example/clientCapabilities":{}}}}',
];

void t.test('spellings of the 2026-07-28 envelope members are refused', (t) => {
  for (const [name, text] of REFUSED) {
    JSON.parse(text);
    t.ok(hostLine(text), `host: ${name}`);
  }
  for (const [name, text] of SERVER_REFUSED) t.ok(serverLine(text), `server: ${name}`);
  for (const text of FINE) t.equal(hostLine(text), undefined, text);
  t.end();
});

void t.test('a 2026-07-28 retry with the host’s roots under a loose spelling', async (t) => {
  const dir = ownedShortDir(t);
  mkdirSync(join(dir, 'in'));
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  modern:\n    roots:\n      - path: ${dir}/in\n`,
    { dir },
  );
  const s = startRawSession({
    t,
    dir: d.dir,
    socket: d.socket,
    server: 'modern',
    fixture: fixtureServer('revision-2026.mjs'),
  });
  const rows: [string, string][] = [
    ['InputResponses', `"InputResponses":{"roots":${HOST_ROOTS}},"requestState":"state-roots"`],
    ['input_responses', `"input_responses":{"roots":${HOST_ROOTS}},"requestState":"state-roots"`],
    [
      'Roots in the response',
      `"inputResponses":{"roots":{"Roots":[{"uri":"file:///"}]}},"requestState":"state-roots"`,
    ],
  ];
  for (const [i, [what, params]] of rows.entries()) {
    await t.test(what, async (t) => {
      const id = 100 + i;
      s.send(call(params, id));
      const answer = await s.line(`"id":${id}`);
      t.match(answer, /"code":-32600/, 'refused');
      t.notOk(
        s.received().some((l) => l.includes(`"id":${id}`)),
        'the server never saw it',
      );
    });
  }
  await t.test(
    'the exact spelling goes on, with the policy’s roots in place of the host’s',
    async (t) => {
      s.send(call(`"inputResponses":{"roots":${HOST_ROOTS}},"requestState":"state-roots"`, 200));
      const answer = await s.line('"id":200');
      t.notMatch(answer, /"code"/, 'answered by the server');
      const got = s.received().find((l) => l.includes('"id":200')) ?? '';
      t.notMatch(got, /"file:\/\/\/"/, 'not the host’s roots');
      t.match(got, new RegExp(`file://${dir}/in`), 'the policy’s');
    },
  );
});

void t.test(
  'a server of both eras asking for roots in a session opened with initialize',
  async (t) => {
    // The session is 2025's, but the server answers `input_required` all the same: its roots
    // requests are the proxy's to answer there too, and the host's roots never reach it.
    const dir = ownedShortDir(t);
    mkdirSync(join(dir, 'in'));
    const d = await startDaemon(
      t,
      `version: 1\nservers:\n  both:\n    roots:\n      - path: ${dir}/in\n`,
      { dir },
    );
    const s = startRawSession({
      t,
      dir: d.dir,
      socket: d.socket,
      server: 'both',
      fixture: fixtureServer('revision-2026.mjs'),
    });
    await initialize(s);
    const legacy = (params: string, id: number): string =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"roots","arguments":{}${params}}}`;
    s.send(legacy('', 1));
    const first = await s.line('"id":1');
    t.notMatch(first, /input_required/, 'the host is not asked for roots');
    t.match(first, new RegExp(`file://${dir}/in`), 'the server got the policy’s roots');
    s.send(legacy(`,"inputResponses":{"roots":${HOST_ROOTS}},"requestState":"state-roots"`, 2));
    await s.line('"id":2');
    const got = s.received().find((l) => l.includes('"id":2')) ?? '';
    t.notMatch(got, /"file:\/\/\/"/, 'a retry’s roots are not the host’s');
    t.match(got, new RegExp(`file://${dir}/in`), 'but the policy’s');
  },
);

void t.test('answers in any shape but an object, and a state that is no string', (t) => {
  for (const params of [
    `"inputResponses":[${HOST_ROOTS}]`,
    `"inputResponses":"${'roots'}"`,
    '"inputResponses":{},"requestState":{"s":1}',
  ]) {
    t.match(
      hostLine(call(params))?.message,
      /inputResponses is not an object|requestState is not a string/,
      params,
    );
  }
  t.equal(hostLine(call('"inputResponses":null')), undefined, 'null is none');
  t.end();
});
