/**
 * A `--server` name the policy may not mean is shown where the person looks: in the host, as an MCP
 * log message (`notifications/message`) at warning level, and on stderr. A name only `'*'` covers
 * works (that is what `'*'` is for) but is warned about with a "did you mean"; naming it in the
 * policy (`name: {}`) silences it, as does a pattern narrower than `'*'`. With
 * `--allow-unknown-server` a name nothing covers starts, and the warning says the flag allowed it.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  LoggingMessageNotificationSchema,
  type LoggingMessageNotification,
} from '@modelcontextprotocol/sdk/types.js';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { proxiedTransport } from '../helpers/proxied-server.js';
import { FS_SERVER, ownedShortDir, waitFor } from '../helpers/proxy.js';

const TIMEOUT = 60_000;

type Log = LoggingMessageNotification['params'];

/** Connect an SDK v1 host through the proxy; its log messages and the proxy's stderr. */
async function connect(
  t: { teardown(fn: () => unknown): void },
  opts: { server: string; socket: string; proxyArgs?: string[] },
): Promise<{ client: Client; logs: Log[]; stderr: () => string }> {
  const { transport, stderr } = proxiedTransport({
    ...opts,
    command: [process.execPath, FS_SERVER],
  });
  const client = new Client({ name: 'test-host', version: '0' }, { capabilities: {} });
  const logs: Log[] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
    logs.push(n.params);
  });
  t.teardown(() => client.close());
  await client.connect(transport, { timeout: TIMEOUT });
  return { client, logs, stderr };
}

/** Read a file through the proxy: the refusal text, or undefined when the call went through. */
async function refusal(client: Client, path: string): Promise<string | undefined> {
  const r = await client.callTool({ name: 'read_text_file', arguments: { path } });
  const text = JSON.stringify(r.content);
  return /mcp-roots-proxy refused/.test(text) ? text : undefined;
}

void t.test('names the policy may not mean', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  const shared = join(dir, 'shared');
  mkdirSync(w);
  mkdirSync(shared);
  writeFileSync(join(w, 'a.txt'), 'a');
  writeFileSync(join(shared, 's.txt'), 's');
  const d = await startDaemon(
    t,
    [
      'version: 1',
      'servers:',
      '  fs:',
      `    roots: [{path: ${w}}]`,
      '  git:',
      `    roots: [{path: ${w}}]`,
      '  left-to-star: {}',
      "  'work-*':",
      '    readOnly: true',
      "  '*':",
      `    roots: [{path: ${shared}, readOnly: true}]`,
      '',
    ].join('\n'),
    { dir },
  );

  await t.test('a typo only * covers: connects, works, warns with a did-you-mean', async (t) => {
    const { client, logs, stderr } = await connect(t, { server: 'fss', socket: d.socket });
    await waitFor(() => logs.length > 0, TIMEOUT, 'a log message');
    t.match(logs[0], { level: 'warning', logger: 'mcp-roots-proxy' });
    const text = String(logs[0]?.data);
    t.match(text, 'no entry of the policy names the server "fss" (--server fss)');
    t.match(text, "it gets only what the policy's '*' entry gives every server");
    t.match(text, 'Did you mean "fs"?');
    t.match(text, "The policy's servers: fs, git, left-to-star.", 'declared names only');
    t.match(text, '`fss: {}` under `servers:`', 'how to silence it');
    await waitFor(() => /warn: no entry of the policy names the server "fss"/.test(stderr()));
    t.equal(await refusal(client, join(shared, 's.txt')), undefined, "'*' rules apply");
    t.ok(await refusal(client, join(w, 'a.txt')), 'fs rules do not');
  });

  for (const server of ['left-to-star', 'work-x', 'fs']) {
    await t.test(`${server}: no warning`, async (t) => {
      const { client, logs, stderr } = await connect(t, { server, socket: d.socket });
      // The warning would follow the initialize result at once; a call's answer comes after it.
      t.equal(await refusal(client, join(shared, 's.txt')), undefined);
      t.same(logs, [], 'no log message');
      t.notMatch(stderr(), /no entry of the policy names/);
    });
  }

  await t.test('--allow-unknown-server: the warning says the flag allowed it', async (t) => {
    const dir2 = join(dir, 'd2');
    mkdirSync(dir2);
    const policy = `version: 1\nservers:\n  fs:\n    roots: [{path: ${w}}]\n`;
    const d2 = await startDaemon(t, policy, { dir: dir2 });
    const { client, logs, stderr } = await connect(t, {
      server: 'fss',
      socket: d2.socket,
      proxyArgs: ['--allow-unknown-server'],
    });
    await waitFor(() => logs.length > 0, TIMEOUT, 'a log message');
    const text = String(logs[0]?.data);
    t.match(text, 'no entry of the policy names the server "fss"');
    t.match(text, 'started anyway, as --allow-unknown-server allows');
    t.match(text, 'every call with a path is refused until the policy names it');
    t.match(text, 'Did you mean "fs"?');
    t.notMatch(
      text,
      '`--allow-unknown-server` starts it anyway',
      'not told to use the flag it has',
    );
    await waitFor(() => /started anyway, as --allow-unknown-server allows/.test(stderr()));
    t.notMatch(stderr(), /would get no roots/, 'stderr is not the unacknowledged text');
    t.ok(await refusal(client, join(w, 'a.txt')), 'every path is still refused');
  });
});
