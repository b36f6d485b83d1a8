import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, proxyCommand, waitFor } from '../helpers/proxy.js';

/** A tiny MCP server: logs every line it receives, answers a few methods, exits 3 on EOF. */
const FIXTURE = String.raw`
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
const log = process.argv[2];
const out = (s) => process.stdout.write(s + '\n');
out('this is not JSON');
const tools = [
  [{ name: 'peek', inputSchema: { type: 'object', properties: { target: { type: 'string' } } } }],
  [{ name: 'write_it', inputSchema: { type: 'object', properties: { path: { type: 'string' } } } },
   { name: 'read_it', annotations: { readOnlyHint: true },
     inputSchema: { type: 'object', properties: { where: { type: 'string', format: 'uri' } } } }],
];
createInterface({ input: process.stdin }).on('line', (line) => {
  appendFileSync(log, line + '\n');
  const m = JSON.parse(line);
  const id = /"id"\s*:\s*("[^"]*"|-?\d+)/.exec(line)?.[1];
  if (m.method === 'initialize') {
    out('{"jsonrpc":"2.0","id":' + id + ',"result":{"protocolVersion":"2024-11-05","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"fixture","version":"0"}}}');
  } else if (m.method === 'notifications/initialized') {
    out('{"jsonrpc":"2.0","id":"r1","method":"roots/list","params":{"_meta":{"progressToken":"tok"}}}');
    out('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r1"}}');
    out('{"jsonrpc":"2.0","id":"r2","method":"roots/list"}');
  } else if (m.method === 'tools/list') {
    const page = m.params && m.params.cursor === 'p2' ? 1 : 0;
    out(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: { tools: tools[page], ...(page === 0 ? { nextCursor: 'p2' } : {}) } }));
  } else if (m.method === 'ping' || m.method === 'tools/call' || m.method === 'resources/read') {
    out('{"jsonrpc":"2.0","id":' + id + ',"result":{"content":[{"type":"text","text":"server ran ' + m.method + '"}]}}');
  }
});
process.stdin.on('end', () => process.exit(3));
`;

interface Session {
  child: ChildProcessWithoutNullStreams;
  stdout: Buffer[];
  stderr: () => string;
  send(line: string): void;
  received: () => string[];
  /** The first stdout line containing `needle`, waiting for it. */
  line(needle: string, ms?: number): Promise<string>;
  exit: Promise<number | null>;
}

function start(dir: string, socket: string, extra: string[] = []): Session {
  const log = join(dir, `received-${Date.now()}-${Math.random()}.log`);
  writeFileSync(log, '');
  const fixture = join(dir, 'fixture.mjs');
  if (!existsSync(fixture)) writeFileSync(fixture, FIXTURE);
  const { command, args, env } = proxyCommand(
    ['--server', 'raw', '--socket', socket, '--log-level', 'debug', ...extra],
    [process.execPath, fixture, log],
  );
  const child = spawn(command, args, { env });
  const stdout: Buffer[] = [];
  let err = '';
  let pending = Buffer.alloc(0);
  child.stdout.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    for (let nl = pending.indexOf(10); nl !== -1; nl = pending.indexOf(10)) {
      stdout.push(pending.subarray(0, nl));
      pending = pending.subarray(nl + 1);
    }
  });
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const s: Session = {
    child,
    stdout,
    stderr: () => err,
    send: (line) => child.stdin.write(line + '\n'),
    received: () => readFileSync(log, 'utf8').split('\n').filter(Boolean),
    async line(needle, ms = 5000) {
      let found: string | undefined;
      await waitFor(
        () =>
          (found = stdout.map((b) => b.toString()).find((l) => l.includes(needle))) !== undefined,
        ms,
        `a line with ${needle}\n${err}`,
      );
      return found!;
    },
    exit,
  };
  return s;
}

void t.test('the proxy on the wire', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'in'), { recursive: true });
  mkdirSync(join(w, 'ro'));
  mkdirSync(join(w, 'out'));
  const policy = `version: 1
servers:
  raw:
    roots:
      - path: ${w}/in
        name: inside
      - path: ${w}/ro
        readOnly: true
    tools:
      peek:
        paths: [target]
        readOnly: true
`;
  const d = await startDaemon(t, policy, { dir });
  const s = start(d.dir, d.socket);

  // A big id, odd spacing and an extra member: all must survive byte for byte.
  const init = `{"jsonrpc":"2.0", "id":12345678901234567890,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{"roots":{"listChanged":false},"x":1},"clientInfo":{"name":"host","version":"1"},"extra":[1, 2]}}`;
  s.send(init);
  const initAnswer = await s.line('"fixture"');
  t.match(
    initAnswer,
    /^\{"jsonrpc":"2\.0","id":12345678901234567890,"result"/,
    'the id above 2^53 survives',
  );
  const gotInit = s.received().find((l) => l.includes('"initialize"'))!;
  t.equal(
    gotInit,
    init.replace('"roots":{"listChanged":false}', '"roots":{"listChanged":true}'),
    'initialize: only capabilities.roots changes',
  );

  s.send('{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}');
  s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  await waitFor(() => s.received().some((l) => l.includes('"id":"r2"')), 5000, 'roots answer');
  const rootsAnswer = s.received().find((l) => l.includes('"id":"r2"'))!;
  t.same(
    JSON.parse(rootsAnswer),
    {
      jsonrpc: '2.0',
      id: 'r2',
      result: {
        roots: [
          { uri: pathToFileURL(`${w}/in`).href, name: 'inside' },
          { uri: pathToFileURL(`${w}/ro`).href, name: 'ro' },
        ],
      },
    },
    'roots/list is answered from the daemon, without _meta before 2025-06-18',
  );
  t.notOk(
    s.received().some((l) => l.includes('roots/list_changed')),
    'the host’s list_changed is dropped',
  );

  const ping = '{"jsonrpc":"2.0","id": 9007199254740993 ,"method":"ping"}';
  s.send(ping);
  t.equal(
    await s.line('9007199254740993'),
    '{"jsonrpc":"2.0","id":9007199254740993,"result":{"content":[{"type":"text","text":"server ran ping"}]}}',
  );
  t.ok(s.received().includes(ping), 'a relayed line reaches the server byte for byte');

  // The proxy lists the tools itself, every page, with ids of its own.
  await waitFor(() => s.received().some((l) => l.includes('"cursor":"p2"')), 5000, 'page 2');
  t.ok(s.received().some((l) => l.includes('"id":"mcp-roots-proxy:1","method":"tools/list"')));

  const call = (id: number, name: string, args: object) =>
    s.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name, arguments: args },
      }),
    );
  call(11, 'peek', { target: `${w}/out/x` });
  const r11 = JSON.parse(await s.line('"id":11,'));
  t.equal(r11.result.isError, true, 'a policy tool rule makes target a path');
  t.match(r11.result.content[0].text, `mcp-roots-proxy refused peek on ${w}/out/x`);
  call(12, 'peek', { target: `${w}/ro/x` });
  t.match(
    await s.line('"id":12,'),
    'server ran tools/call',
    'a read-only tool may read a read-only root',
  );
  call(13, 'write_it', { path: `${w}/ro/x` });
  t.match(JSON.parse(await s.line('"id":13,')).result.content[0].text, /read-only root/);
  call(14, 'read_it', { where: pathToFileURL(`${w}/out/y`).href });
  t.equal(
    JSON.parse(await s.line('"id":14,')).result.isError,
    true,
    'format: uri arguments are checked',
  );
  call(15, 'read_it', { where: 'https://example.com/' });
  t.match(await s.line('"id":15,'), 'server ran', 'a non-file URI is not a path');
  s.send(
    JSON.stringify({
      jsonrpc: '2.0',
      id: 16,
      method: 'resources/read',
      params: { uri: pathToFileURL(`${w}/out/z`).href },
    }),
  );
  const r16 = JSON.parse(await s.line('"id":16,'));
  t.equal(r16.error.code, -32002, 'resources/read of a file outside is refused');
  call(18, 'write_it', { path: `${w}/in/a\0b` });
  t.equal(
    JSON.parse(await s.line('"id":18,')).result.content[0].text,
    `mcp-roots-proxy refused write_it on "${w}/in/a\\u0000b": "${w}/in/a\\u0000b" contains a NUL byte`,
    'a NUL byte is shown escaped, never raw',
  );
  call(19, 'write_it', { path: `${w}/out/a\nb` });
  const r19 = JSON.parse(await s.line('"id":19,')).result.content[0].text as string;
  t.match(r19, `mcp-roots-proxy refused write_it on "${w}/out/a\\nb": "${w}/out/a\\nb" `);
  t.notOk(r19.includes('\n'), 'a newline in a path the daemon refused is escaped too');
  t.notMatch(s.stderr(), /no entry of the policy names/, 'raw has an entry: no warning');
  t.notMatch(s.stderr(), /enforcement is off/);
  s.send('{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":11}}');
  s.send('{"jsonrpc":"2.0","id":17,"method":"ping"}');
  await s.line('"id":17,');
  const received = s.received();
  t.notOk(
    received.some((l) => /"id":1[1389]\b|"id":14,|"id":16/.test(l)),
    'refused calls never reach the server',
  );
  t.notOk(
    received.some((l) => l.includes('"requestId":11')),
    'their cancellation is not relayed',
  );

  s.child.stdin.end();
  t.equal(await s.exit, 3, 'the proxy exits with the server’s status');
  for (const line of s.stdout) {
    const msg = JSON.parse(line.toString()) as { jsonrpc?: string };
    t.equal(msg.jsonrpc, '2.0');
  }
  const out = Buffer.concat(s.stdout).toString();
  t.notOk(out.includes('not JSON'), 'a non-JSON line from the server is dropped');
  t.notOk(out.includes('roots/list'), 'the server’s roots/list never reaches the host');
  t.notOk(out.includes('"requestId":"r1"'), 'nor does its cancellation');
  t.notOk(out.includes('mcp-roots-proxy:'), 'nor the answers to the proxy’s own requests');
  t.match(
    s.stderr(),
    /dropped a line from the server that is not a JSON-RPC message: this is not JSON/,
  );
});

void t.test('--no-enforce relays every call; SIGTERM reaches the server', async (t) => {
  const d = await startDaemon(t, 'version: 1\n');
  const s = start(d.dir, d.socket, ['--no-enforce']);
  s.send(
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}',
  );
  s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  s.send(
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write_it","arguments":{"path":"/etc/passwd"}}}',
  );
  t.match(await s.line('"id":2,'), 'server ran tools/call');
  t.notOk(
    s.received().some((l) => l.includes('mcp-roots-proxy:')),
    'no tools/list of its own',
  );
  await waitFor(
    () => s.stderr().includes('no entry of the policy names'),
    5000,
    'the no-entry warning',
  );
  s.child.kill('SIGTERM');
  t.equal(await s.exit, 128 + 15, 'the server was killed by SIGTERM, and the proxy says so');
  const warnings = s
    .stderr()
    .split('\n')
    .filter((l) => /^mcp-roots-proxy\[raw\] warn: (enforcement is off|no entry)/.test(l));
  t.same(
    warnings,
    [
      'mcp-roots-proxy[raw] warn: enforcement is off (--no-enforce): tool calls are not checked against the policy; the server sees only its roots, which MCP servers are free to ignore',
      'mcp-roots-proxy[raw] warn: no entry of the policy names "raw"; it gets no roots — check --server',
    ],
    'each warning once: --no-enforce, and a name no entry matches',
  );
});

void t.test('usage errors', async (t) => {
  const { command, args, env } = proxyCommand(['--socket', '/nowhere'], ['true']);
  const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  let out = '';
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  t.equal(code, 2);
  t.equal(out, '', 'nothing on stdout');
  t.match(err, /--server NAME is required\nusage: mcp-roots-proxy --server NAME/);
});
