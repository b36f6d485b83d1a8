/**
 * Spellings of a key that another reader takes for the same member, beyond case. Each row is a
 * line the proxy must refuse, because a reader the server or host may use reads it differently:
 * - Python's MCP models (pydantic) with snake_case fields, camelCase aliases and
 *   `populate_by_name`: `meta` fills `_meta`, `request_id` fills `requestId`, `progress_token`
 *   fills `progressToken`, while the proxy, reading exactly, finds no such member;
 * - Go's `encoding/json`, which folds every key to the least code point of its case-fold orbit,
 *   including orbits whose members have no one-code-point upper case (`ΐ` U+0390 and U+1FD3).
 */
import t from 'tap';
import { ambiguousKeys, looseKey } from '../../proxy/ambiguous-keys.js';
import { McpLine } from '../../proxy/mcp-line.js';
import { unreadableHostLine, unreadableServerLine } from '../../proxy/unreadable-line.js';

const hostLine = (text: string) => unreadableHostLine(new McpLine(Buffer.from(text, 'utf8')));
const serverLine = (text: string) => unreadableServerLine(new McpLine(Buffer.from(text, 'utf8')));

const call = (params: string): string =>
  `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":${params}}`;

void t.test('snake_case and underscore spellings of envelope members are refused', (t) => {
  const refused: [string, string][] = [
    ['meta for _meta', call('{"name":"r","arguments":{},"meta":{"progressToken":1}}')],
    ['progress_token in _meta', call('{"name":"r","arguments":{},"_meta":{"progress_token":1}}')],
    ['_name for name', call('{"_name":"read_it","arguments":{}}')],
    ['arguments_ for arguments', call('{"name":"r","arguments_":{"path":"/etc/passwd"}}')],
    [
      '_uri for uri',
      '{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"_uri":"file:///etc"}}',
    ],
    ['_id for id', '{"jsonrpc":"2.0","_id":1,"method":"tools/call","params":{}}'],
    ['_method for method', '{"jsonrpc":"2.0","id":1,"_method":"tools/call","params":{}}'],
    [
      'request_id in a cancellation',
      '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"request_id":"mcp-roots-proxy:ask:1"}}',
    ],
    [
      'protocol_version and client_info',
      '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocol_version":"2025-06-18","capabilities":{},"clientInfo":{"name":"h","version":"1"}}}',
    ],
  ];
  for (const [name, text] of refused) {
    t.ok(hostLine(text), `host: ${name}`);
    t.ok(ambiguousKeys(text), `keys: ${name}`);
  }
  t.end();
});

void t.test('a server cannot name the proxy’s own request in a spelling the proxy skips', (t) => {
  const lines = [
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"request_id":"mcp-roots-proxy:ask:1"}}',
    '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestid":"mcp-roots-proxy:ask:1"}}',
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress_token":"t","progress":1}}',
    '{"jsonrpc":"2.0","id":"s1","method":"roots/list","params":{"meta":{}}}',
  ];
  for (const text of lines) t.ok(serverLine(text), text);
  t.end();
});

void t.test('underscores still count inside values that are not the envelope', (t) => {
  const fine = [
    call('{"name":"r","arguments":{"file_path":"a","filepath":"b","_path":"c"}}'),
    call('{"name":"r","arguments":{"meta":{"_meta":1}},"_meta":{"progressToken":1}}'),
    '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":{"request_id":1}}}',
  ];
  for (const text of fine) {
    t.equal(hostLine(text), undefined, text);
    t.equal(serverLine(text), undefined, text);
  }
  t.end();
});

void t.test('keys Go folds together though neither has a one-code-point upper case', (t) => {
  // Each pair is one orbit of Unicode's simple case folding: Go's encoding/json folds both to one.
  const pairs: [string, string][] = [
    ['\u0390', '\u1fd3'],
    ['\u03b0', '\u1fe3'],
    ['\ufb05', '\ufb06'],
    ['\u00df', '\u1e9e'],
    ['\u1f80', '\u1f88'],
    ['\u00e5', '\u212b'],
    ['\u03c2', '\u03a3'],
    ['\u01c4', '\u01c5'],
  ];
  for (const [a, b] of pairs) {
    t.equal(looseKey(`x${a}`), looseKey(`x${b}`), `${a} ${b}`);
    const text = call(`{"name":"r","arguments":{"p${a}":"/in","p${b}":"/out"}}`);
    t.match(hostLine(text)?.message ?? '', /one key/, `${a} ${b}`);
  }
  t.end();
});

void t.test(
  'a line nested 100,000 objects deep is read through, its path shown by its ends',
  (t) => {
    const n = 100_000;
    const deep = (inner: string) => `${'{"a":'.repeat(n)}${inner}${'}'.repeat(n)}`;
    t.equal(ambiguousKeys(call(`{"name":"r","arguments":${deep('1')}}`)), undefined);
    const refused = ambiguousKeys(call(`{"name":"r","arguments":${deep('{"k":1,"K":2}')}}`)) ?? '';
    t.match(refused, /in params\.arguments\.a\.a\.…\.a\.a\.a\.a are one key/);
    t.ok(refused.length < 400, 'the refusal stays short');
    t.end();
  },
);
