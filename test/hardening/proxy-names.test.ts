/**
 * Names a reader may cut short or clean: a C reader (cJSON and the like) hands on a string as a
 * C string, so `tools/call\u0000x` is `tools/call` to it, and a tool `move_file\u0000` is
 * `move_file`, while the proxy reads an unknown method it does not check, or a tool it has no
 * schema or rule for. A line whose method or tool name holds a control character or a lone
 * surrogate is refused from the host, and a server's request or notification so named goes no
 * further.
 */
import t from 'tap';
import { McpLine } from '../../proxy/mcp-line.js';
import { unreadableHostLine, unreadableServerLine } from '../../proxy/unreadable-line.js';

const line = (text: string) => new McpLine(Buffer.from(text, 'utf8'));
const args = '{"source":"/etc/passwd","destination":"/tmp/x"}';

const HOST_REFUSED: [string, string][] = [
  [
    'method with NUL',
    `{"jsonrpc":"2.0","id":1,"method":"tools/call\\u0000x","params":{"name":"move_file","arguments":${args}}}`,
  ],
  [
    'method ending in NUL',
    `{"jsonrpc":"2.0","id":1,"method":"resources/read\\u0000","params":{"uri":"file:///etc/passwd"}}`,
  ],
  [
    'method with a tab',
    `{"jsonrpc":"2.0","id":1,"method":"tools/call\\t","params":{"name":"move_file","arguments":${args}}}`,
  ],
  ['method with DEL', `{"jsonrpc":"2.0","id":1,"method":"tools/call\\u007f","params":{}}`],
  [
    'method with a lone surrogate',
    `{"jsonrpc":"2.0","id":1,"method":"tools/call\\ud800","params":{}}`,
  ],
  [
    'notification method with NUL',
    `{"jsonrpc":"2.0","method":"tools/call\\u0000","params":{"name":"move_file","arguments":${args}}}`,
  ],
  [
    'tool name with NUL',
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"move_file\\u0000","arguments":${args}}}`,
  ],
  [
    'tool name with a newline',
    `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"move_file\\n","arguments":${args}}}`,
  ],
  [
    'prompt name with NUL',
    '{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p\\u0000","arguments":{}}}',
  ],
];

const SERVER_REFUSED: [string, string][] = [
  ['roots/list with NUL', '{"jsonrpc":"2.0","id":"s1","method":"roots/list\\u0000"}'],
  [
    'cancellation with NUL',
    '{"jsonrpc":"2.0","method":"notifications/cancelled\\u0000","params":{"requestId":"mcp-roots-proxy:ask:1"}}',
  ],
];

const FINE: string[] = [
  `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"move_file","arguments":${args}}}`,
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"écrire_fichier","arguments":{"text":"a\\u0000b\\n"}}}',
  '{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"a\\u0000b"}}',
  '{"jsonrpc":"2.0","id":1,"method":"ping"}',
];

void t.test('host lines with a control character in a name are refused', (t) => {
  for (const [name, text] of HOST_REFUSED) {
    t.match(
      unreadableHostLine(line(text))?.message ?? '',
      /control character|lone surrogate/,
      name,
    );
  }
  t.end();
});

void t.test('server requests and notifications so named go no further', (t) => {
  for (const [name, text] of SERVER_REFUSED) {
    t.match(unreadableServerLine(line(text)) ?? '', /control character|lone surrogate/, name);
  }
  t.end();
});

void t.test('names without one pass, and control characters in values are the tool’s', (t) => {
  for (const text of FINE) {
    t.equal(unreadableHostLine(line(text)), undefined, text);
    t.equal(unreadableServerLine(line(text)), undefined, text);
  }
  t.end();
});
