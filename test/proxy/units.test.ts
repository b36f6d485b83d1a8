import t from 'tap';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DaemonLink } from '../../proxy/daemon-link.js';
import { checkValues, shapeProblem, showPath, toLocalPath } from '../../proxy/enforce.js';
import { makeProxyLogger } from '../../proxy/log.js';
import { memberText, setMember } from '../../protocol/json-text.js';
import { idKey } from '../../protocol/messages.js';
import { LineSplitter } from '../../proxy/line-splitter.js';
import { parseProxyArgs } from '../../proxy/options.js';
import { applyRule, learnTool } from '../../proxy/tool-table.js';
import { withRootsCapability } from '../../proxy/server-roots.js';
import { shortDir } from '../helpers/short-dir.js';
import { waitFor } from '../helpers/proxy.js';

void t.test('json-text edits one member and leaves the rest byte for byte', (t) => {
  const line = '{"id": 12345678901234567890 ,"params":{"a":"}\\"{","b":[1,{"c":2}]},"x":1}';
  t.equal(memberText(line, 'id'), '12345678901234567890');
  t.equal(memberText(line, 'params'), '{"a":"}\\"{","b":[1,{"c":2}]}');
  t.equal(setMember(line, 'x', '2'), line.replace('"x":1', '"x":2'));
  t.equal(setMember('{}', 'roots', '{}'), '{"roots":{}}');
  t.equal(setMember('{ "a":1}', 'roots', '{}'), '{"roots":{}, "a":1}');
  // `params: null` (read as none): an object of that member alone, never text written into null.
  t.equal(setMember('null', 'capabilities', '{}'), '{"capabilities":{}}');
  const init = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":null}';
  t.same(JSON.parse(withRootsCapability(init)).params, {
    capabilities: { roots: { listChanged: true } },
  });
  // Answers to input requests nobody asked: never passed on with the handshake.
  const answered =
    '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{},"inputResponses":{"where":{"roots":[{"uri":"file:///"}]}},"requestState":"s"}}';
  t.same(JSON.parse(withRootsCapability(answered)).params, {
    capabilities: { roots: { listChanged: true } },
  });
  t.equal(idKey('"7"'), 's:7');
  t.not(idKey('9007199254740993'), idKey('9007199254740992'));
  t.equal(idKey('null'), undefined);
  t.end();
});

void t.test('the line splitter keeps bytes, \\r and split characters', (t) => {
  const s = new LineSplitter();
  const euro = Buffer.from('€');
  t.same(s.push(Buffer.concat([Buffer.from('a\r\n{"x":"'), euro.subarray(0, 1)])), [
    Buffer.from('a\r'),
  ]);
  t.same(s.push(Buffer.concat([euro.subarray(1), Buffer.from('"}\nrest')])).map(String), [
    '{"x":"€"}',
  ]);
  t.same(s.end(), Buffer.from('rest'));
  t.equal(s.end(), undefined);
  t.end();
});

void t.test('paths the proxy will not ask about', (t) => {
  t.match(shapeProblem('rel/a'), /relative path/);
  t.match(shapeProblem('~/a'), /starts with ~/);
  t.match(shapeProblem('/a/../b'), /\.\. segment/);
  t.equal(shapeProblem('/a/..b/c'), undefined, 'a name starting with .. is not a .. segment');
  for (const lone of ['/a/\udcff', '/a/\ud800x', '/a/\udc00\ud800', '/\ud83d'])
    t.match(shapeProblem(lone), /half of a UTF-16 pair/, JSON.stringify(lone));
  t.equal(shapeProblem('/a/\ud83d\ude00'), undefined, 'a whole pair is a character');
  t.same(toLocalPath('file:///a%20b', true), { path: '/a b' });
  t.equal(toLocalPath('https://x/', true), undefined);
  t.same(toLocalPath('https://x/', false), { path: 'https://x/' }, 'then refused as relative');
  t.match(toLocalPath('file://host/a', false), { reason: /not a valid file URI/ });
  t.equal(shapeProblem('/a\0b'), '"/a\\u0000b" contains a NUL byte', 'control characters escaped');
  t.equal(
    shapeProblem('a\nb'),
    '"a\\nb" is a relative path; give an absolute path, without `~` or `..`',
  );
  t.equal(showPath('/a b'), '/a b', 'a plain path is shown as it is');
  t.end();
});

void t.test('a daemon refusal names a path with control characters escaped', async (t) => {
  const refusal = await checkValues(
    [{ value: '/w/a\tb', uri: false, where: 'path' }],
    'read',
    (path) =>
      Promise.resolve({ allowed: false, access: 'read', reason: `${path} is outside every root` }),
  );
  t.match(refusal, { path: '/w/a\tb', reason: '"/w/a\\tb" is outside every root' });
});

void t.test('no daemon: the first warning is whole sentences', async (t) => {
  const dir = shortDir();
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const lines: string[] = [];
  const log = makeProxyLogger('fs', 'warn', { write: (s: string) => lines.push(s) });
  const link = new DaemonLink({
    server: 'fs',
    socket: join(dir, 'none.sock'),
    clientInfo: { name: 't', version: '0' },
    log,
  }).start();
  t.teardown(() => link.close());
  await waitFor(() => lines.length > 0, 30_000, 'a warning');
  t.same(lines, [
    `mcp-roots-proxy[fs] warn: mcp-rootsd is not running (connect ENOENT ${dir}/none.sock). Start it with \`systemctl --user start mcp-rootsd.socket\` (once \`rootsctl install-service\` has run) or \`mcp-rootsd\`. Retrying.\n`,
  ]);
});

void t.test("tools: the schema, read-only, and the policy's override", (t) => {
  const inputSchema = { properties: { path: { type: 'string' }, text: { type: 'string' } } };
  const tool = learnTool({ name: 't', annotations: { readOnlyHint: true }, inputSchema });
  t.same(tool, { inputSchema, readOnly: true });
  t.same(applyRule(tool, { paths: ['text'], readOnly: false }), {
    inputSchema,
    declaredPaths: ['text'],
    readOnly: false,
  });
  t.end();
});

void t.test('the command line', (t) => {
  t.same(parseProxyArgs(['--server', 'fs', '--', 'npx', '-y', 'x', '--server', 'y']), {
    server: 'fs',
    socket: undefined,
    enforce: true,
    logLevel: 'info',
    allowUnknownServer: false,
    sandbox: false,
    env: [],
    cwd: undefined,
    command: 'npx',
    args: ['-y', 'x', '--server', 'y'],
  });
  t.equal(
    parseProxyArgs(['--server', 'fss', '--allow-unknown-server', '--', 'x'])?.allowUnknownServer,
    true,
    '--allow-unknown-server',
  );
  t.match(
    parseProxyArgs([
      '--server=fs',
      '--no-enforce',
      '--log-level=debug',
      '--socket',
      's',
      '--',
      'c',
    ]),
    {
      enforce: false,
      logLevel: 'debug',
      socket: 's',
    },
  );
  t.equal(parseProxyArgs(['--help']), undefined);
  t.throws(() => parseProxyArgs(['--', 'c']), {
    code: 'USAGE',
    message: /--server NAME is required/,
  });
  t.throws(() => parseProxyArgs(['--server', 'fs', '--']), { message: /command is missing/ });
  t.match(parseProxyArgs(['--server', 'fs']), { command: undefined, args: [] });
  t.match(
    parseProxyArgs([
      '--server=git',
      '--sandbox',
      '--env',
      'DIRS={roots}',
      '--env=A=b=c',
      '--cwd',
      '{root}',
      '--',
      'g',
      '--repository={root}',
    ]),
    {
      sandbox: true,
      env: [
        ['DIRS', '{roots}'],
        ['A', 'b=c'],
      ],
      cwd: '{root}',
      command: 'g',
      args: ['--repository={root}'],
    },
  );
  t.throws(() => parseProxyArgs(['--server', 'fs', '--env', 'NOVALUE', '--', 'c']), {
    message: /NAME=VALUE/,
  });
  t.throws(() => parseProxyArgs(['--server', 'fs', 'cmd']), { message: /cmd is not an option/ });
  t.throws(() => parseProxyArgs(['--server', 'fs', '--log-level', 'loud', '--', 'c']), {
    message: /--log-level must be one of/,
  });
  t.end();
});
