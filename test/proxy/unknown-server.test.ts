/**
 * A broken proxy must not look healthy to the host. A `--server` name no entry of the policy names
 * fails the handshake with an error naming the policy's servers and the likely one, in a 2025-era
 * session (SDK v1 host) and a 2026-07-28 one (SDK v2 host, `server/discover` and the requests
 * after it), unless `--allow-unknown-server`. An unreachable daemon: the host still connects, gets
 * a warning as an MCP log message, and every refusal says how to start the daemon.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client as V2Client } from '@modelcontextprotocol/client';
import { StdioClientTransport as V2Transport } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  LoggingMessageNotificationSchema,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import t from 'tap';
import { bin } from '../helpers/bin.js';
import { startDaemon } from '../helpers/daemon.js';
import { FS2_SERVER } from '../helpers/era-host.js';
import { proxiedTransport } from '../helpers/proxied-server.js';
import { FS_SERVER, ownedShortDir, proxyCommand, waitFor } from '../helpers/proxy.js';
import { startRawHost } from '../helpers/raw-host.js';

const TIMEOUT = 60_000;

/** A v1 host that records the log messages it gets. */
function v1Host(): { client: Client; logs: LoggingMessageNotification['params'][] } {
  const client = new Client({ name: 'test-host', version: '0' }, { capabilities: {} });
  const logs: LoggingMessageNotification['params'][] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(n.params);
  });
  return { client, logs };
}

void t.test('a --server name the policy lacks', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(w);
  writeFileSync(join(w, 'a.txt'), 'a');
  const block = `    roots:\n      - path: ${w}\n`;
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  fs:\n${block}  git:\n${block}  viewer:\n${block}`,
    { dir },
  );

  await t.test('fails the 2025-era handshake, naming the servers and the likely one', async (t) => {
    const { transport, stderr } = proxiedTransport({
      server: 'fss',
      socket: d.socket,
      command: [process.execPath, FS_SERVER],
    });
    const { client } = v1Host();
    t.teardown(() => client.close());
    const err = (await client.connect(transport, { timeout: TIMEOUT }).then(
      () => undefined,
      (e: unknown) => e,
    )) as Error | undefined;
    t.ok(err, 'the handshake fails');
    t.match(err?.message, 'no entry of the policy names the server "fss" (--server fss)');
    t.match(err?.message, 'Did you mean "fs"?');
    t.match(err?.message, "The policy's servers: fs, git, viewer.");
    t.match(err?.message, '--allow-unknown-server');
    // Commands that run as printed: status with the socket (edit takes the policy file), and a
    // grant with its server named.
    // Both as the person runs rootsctl: `edit` the same command, without the socket.
    const named =
      /`([^`]+) --socket \S+ status` names its file; `([^`]+) --config FILE edit` edits it/.exec(
        err?.message ?? '',
      );
    t.ok(named, 'status with the socket, edit with the policy file');
    t.equal(named?.[2], named?.[1], 'the same rootsctl in both');
    t.match(err?.message, / grant fss DIRECTORY --for 1h`/);
    t.notMatch(err?.message, /--socket \S+ edit/, 'no edit with --socket, which edit refuses');
    t.match(stderr(), /error: refused the host's initialize: no entry of the policy names/);
  });

  await t.test(
    'with --allow-unknown-server: connects, warns on stderr, refuses paths',
    async (t) => {
      const { transport, stderr } = proxiedTransport({
        server: 'fss',
        socket: d.socket,
        proxyArgs: ['--allow-unknown-server'],
        command: [process.execPath, FS_SERVER],
      });
      const { client } = v1Host();
      t.teardown(() => client.close());
      await client.connect(transport, { timeout: TIMEOUT });
      await waitFor(() => /warn: no entry of the policy names the server "fss"/.test(stderr()));
      const r = await client.callTool({
        name: 'read_text_file',
        arguments: { path: `${w}/a.txt` },
      });
      t.equal(r.isError, true, 'a path is refused: the policy gives the name no roots');
      t.match(JSON.stringify(r.content), /mcp-roots-proxy refused read_text_file/);
    },
  );

  for (const mode of ['auto', 'pin'] as const) {
    await t.test(`a 2026-07-28 host (v2 client, ${mode}) fails to connect`, async (t) => {
      const { command, args, env } = proxyCommand(
        ['--server', 'gti', '--socket', d.socket],
        [process.execPath, FS2_SERVER, w],
      );
      const transport = new V2Transport({ command, args, env, stderr: 'pipe' });
      const client = new V2Client(
        { name: 'test-host', version: '0' },
        {
          capabilities: {},
          versionNegotiation: {
            mode: mode === 'auto' ? 'auto' : { pin: '2026-07-28' },
            probe: { timeoutMs: TIMEOUT },
          },
        },
      );
      t.teardown(() => client.close());
      const err = (await client.connect(transport, { timeout: TIMEOUT }).then(
        () => undefined,
        (e: unknown) => e,
      )) as Error | undefined;
      t.ok(err, 'the connection fails');
      if (mode === 'auto') {
        // server/discover refused, the client falls back to initialize, refused with the text.
        t.match(err?.message, 'no entry of the policy names the server "gti"');
        t.match(err?.message, 'Did you mean "git"?');
      } else {
        // A pinned client reads any error to server/discover as "no 2026-07-28 here" (and probes
        // in a process of its own, whose stderr says why).
        t.match(err?.message, /Version negotiation failed/);
      }
    });
  }

  await t.test('a 2026-07-28 request without server/discover gets the error', async (t) => {
    const host = startRawHost({
      t,
      server: 'gti',
      socket: d.socket,
      serverCommand: [process.execPath, FS2_SERVER, w],
    });
    const meta = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    host.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } });
    const a = await host.answer(1);
    t.equal(a.error?.code, -32602);
    t.match(a.error?.message, 'no entry of the policy names the server "gti"');
    t.match(a.error?.data, {
      server: 'gti',
      policyServers: ['fs', 'git', 'viewer'],
      didYouMean: 'git',
    });
    host.send({ jsonrpc: '2.0', id: 2, method: 'ping', params: { _meta: meta } });
    const pong = await host.answer(2);
    t.notMatch(
      JSON.stringify(pong),
      'no entry of the policy',
      `a ping is not refused: ${JSON.stringify(pong)}`,
    );
  });
});

void t.test(
  'an unreachable daemon: the host connects, is warned, and refusals say why',
  async (t) => {
    const dir = ownedShortDir(t);
    const socket = join(dir, 'nobody-listens.sock');
    // The daemon as the person can start it (from a clone: node and the built file), on the
    // proxy's --socket; the systemd unit serves only the default socket, so it is not named.
    const start = `\`(mcp-rootsd|node ${escapeRegExp(bin('daemon'))}) --socket ${escapeRegExp(socket)}\``;
    const { transport } = proxiedTransport({
      server: 'fs',
      socket,
      command: [process.execPath, FS_SERVER, dir],
    });
    const { client, logs } = v1Host();
    t.teardown(() => client.close());
    await client.connect(transport, { timeout: TIMEOUT });
    t.ok(client.getServerCapabilities()?.logging, 'the proxy declares logging for its warnings');
    await waitFor(() => logs.length > 0, TIMEOUT, 'a log message');
    t.match(logs[0], {
      level: 'warning',
      logger: 'mcp-roots-proxy',
      data: new RegExp(
        `^mcp-rootsd is not reachable, so the policy is not known: every call with a path is refused until mcp-rootsd answers \\(start it with ${start} and the --config and --state-dir you run it with; for the demo, \`npm start\` in its repository\\)\\.$`,
      ),
    });
    const r = await client.callTool({ name: 'read_text_file', arguments: { path: `${dir}/a` } });
    t.equal(r.isError, true);
    t.match(
      JSON.stringify(r.content),
      new RegExp(`not reachable.*start it with ${start}`),
      'the refusal says how to start the daemon',
    );
    t.same(await client.setLoggingLevel('error'), {}, 'logging/setLevel is answered by the proxy');
  },
);

void t.test('a daemon lost mid-session: warned, then told it is back', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(w);
  const policy = `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${w}\n`;
  const d1 = await startDaemon(t, policy, { dir });
  const { transport } = proxiedTransport({
    server: 'fs',
    socket: d1.socket,
    command: [process.execPath, FS_SERVER],
  });
  const { client, logs } = v1Host();
  t.teardown(() => client.close());
  await client.connect(transport, { timeout: TIMEOUT });
  await d1.close();
  await waitFor(() => logs.some((l) => l.level === 'warning'), TIMEOUT, 'the warning');
  t.match(logs.find((l) => l.level === 'warning')?.data, /^mcp-rootsd is not reachable/);
  await startDaemon(t, undefined, { dir });
  await waitFor(() => logs.some((l) => l.level === 'notice'), TIMEOUT, 'the notice');
  t.match(logs.find((l) => l.level === 'notice')?.data, /^mcp-rootsd is reachable again/);
});

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
