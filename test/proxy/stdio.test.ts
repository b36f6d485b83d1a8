/** The proxy on the wire, driven with raw JSON-RPC lines: what it changes, answers, refuses and drops. */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import t, { type Test as Tap } from 'tap';
import { bin } from '../helpers/bin.js';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, proxyCommand, waitFor } from '../helpers/proxy.js';
import { startRawSession, type RawSession } from '../helpers/raw-session.js';
import { fixtureServer } from '../helpers/repo.js';

const FIXTURE = fixtureServer('wire.mjs');

function start(t: Tap, dir: string, socket: string, proxyArgs: string[] = []): RawSession {
  return startRawSession({ t, dir, socket, server: 'raw', fixture: FIXTURE, proxyArgs });
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
  const s = start(t, d.dir, d.socket);

  await t.test('initialize: the id survives, only capabilities.roots changes', async (t) => {
    // A big id, odd spacing and an extra member: all must survive byte for byte.
    const init = `{"jsonrpc":"2.0", "id":12345678901234567890,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{"roots":{"listChanged":false},"x":1},"clientInfo":{"name":"host","version":"1"},"extra":[1, 2]}}`;
    s.send(init);
    t.match(
      await s.line('"fixture"'),
      /^\{"jsonrpc":"2\.0","id":12345678901234567890,"result"/,
      'the id above 2^53 survives',
    );
    t.equal(
      s.received().find((l) => l.includes('"initialize"')),
      init.replace('"roots":{"listChanged":false}', '"roots":{"listChanged":true}'),
      'initialize: only capabilities.roots changes',
    );
  });

  await t.test('the server’s roots/list is answered from the daemon', async (t) => {
    s.send('{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}');
    s.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    await waitFor(() => s.received().some((l) => l.includes('"id":"r2"')), 30_000, 'roots answer');
    t.same(
      JSON.parse(s.received().find((l) => l.includes('"id":"r2"'))!),
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
  });

  await t.test('a relayed request and its answer pass byte for byte', async (t) => {
    const ping = '{"jsonrpc":"2.0","id": 9007199254740993 ,"method":"ping"}';
    s.send(ping);
    t.equal(
      await s.line('9007199254740993'),
      '{"jsonrpc":"2.0","id":9007199254740993,"result":{"content":[{"type":"text","text":"server ran ping"}]}}',
    );
    t.ok(s.received().includes(ping), 'a relayed line reaches the server byte for byte');
  });

  await t.test('the proxy lists the tools itself, every page, with ids of its own', async (t) => {
    await waitFor(() => s.received().some((l) => l.includes('"cursor":"p2"')), 30_000, 'page 2');
    t.ok(s.received().some((l) => l.includes('"id":"mcp-roots-proxy:1","method":"tools/list"')));
  });

  const call = (id: number, name: string, args: object) =>
    s.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  const text = async (id: number) =>
    (JSON.parse(await s.line(`"id":${id},`)) as { result: { content: { text: string }[] } }).result
      .content[0]!.text;

  await t.test('tool calls are checked by the policy’s rules and the tools’ schemas', async (t) => {
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
    t.match(await text(13), /read-only root/);
    call(14, 'read_it', { where: pathToFileURL(`${w}/out/y`).href });
    t.equal(
      JSON.parse(await s.line('"id":14,')).result.isError,
      true,
      'format: uri arguments are checked',
    );
    call(15, 'read_it', { where: 'https://example.com/' });
    t.match(await s.line('"id":15,'), 'server ran', 'a non-file URI is not a path');
  });

  await t.test('resources/read of a file outside the roots is refused', async (t) => {
    s.send({
      jsonrpc: '2.0',
      id: 16,
      method: 'resources/read',
      params: { uri: pathToFileURL(`${w}/out/z`).href },
    });
    t.equal(JSON.parse(await s.line('"id":16,')).error.code, -32002);
  });

  await t.test('a refusal shows control characters escaped, never raw', async (t) => {
    call(18, 'write_it', { path: `${w}/in/a\0b` });
    const r18 = await text(18);
    t.ok(
      r18.startsWith(
        `mcp-roots-proxy refused write_it on "${w}/in/a\\u0000b": "${w}/in/a\\u0000b" contains a NUL byte`,
      ),
      'a NUL byte is shown escaped',
    );
    t.notOk(r18.includes('\0'), 'never raw');
    call(19, 'write_it', { path: `${w}/out/a\nb` });
    const r19 = await text(19);
    t.match(r19, `mcp-roots-proxy refused write_it on "${w}/out/a\\nb": "${w}/out/a\\nb" `);
    t.notOk(r19.includes('\n'), 'a newline in a path the daemon refused is escaped too');
    t.notMatch(s.stderr(), /no entry of the policy names/, 'raw has an entry: no warning');
    t.notMatch(s.stderr(), /enforcement is off/);
  });

  await t.test('refused calls and their cancellation never reach the server', async (t) => {
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
  });

  await t.test(
    'at the end: the server’s status, and only MCP frames on the host’s side',
    async (t) => {
      s.child.stdin.end();
      t.equal(await s.exit, 3, 'the proxy exits with the server’s status');
      for (const line of s.hostLines()) {
        t.equal((JSON.parse(line) as { jsonrpc?: string }).jsonrpc, '2.0');
      }
      const out = s.hostLines().join('\n');
      t.notOk(out.includes('not JSON'), 'a non-JSON line from the server is dropped');
      t.notOk(out.includes('roots/list'), 'the server’s roots/list never reaches the host');
      t.notOk(out.includes('"requestId":"r1"'), 'nor does its cancellation');
      t.notOk(out.includes('mcp-roots-proxy:'), 'nor the answers to the proxy’s own requests');
      t.match(
        s.stderr(),
        /dropped a line from the server that is not a JSON-RPC message: this is not JSON/,
      );
    },
  );
});

void t.test('--no-enforce relays every call; SIGTERM reaches the server', async (t) => {
  const d = await startDaemon(t, 'version: 1\n');
  const s = start(t, d.dir, d.socket, ['--no-enforce', '--allow-unknown-server']);
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
      // --allow-unknown-server was given: the warning says so rather than suggest it.
      'mcp-roots-proxy[raw] warn: no entry of the policy names the server "raw" (--server raw); started anyway, as --allow-unknown-server allows: it gets no roots and every call with a path is refused until the policy names it. The policy names no servers.',
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

void t.test('a usage error reaches the host that started the proxy, as its answer', async (t) => {
  // The Inspector's mistake: it took the `--`, so the server's command reads as the proxy's own.
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin('proxy'), '--server', 'fs', 'node', 'server.js'],
    stderr: 'pipe',
  });
  const client = new Client({ name: 'host', version: '1' });
  const failed = await client.connect(transport).then(
    () => undefined,
    (err: unknown) => err as Error,
  );
  await client.close().catch(() => undefined);
  t.match(
    failed?.message,
    /the proxy's command line is wrong: node is not an option of mcp-roots-proxy, and no -- came before it[^]*-- -- node server\.js/,
    'the host shows why, and the fix',
  );
});
