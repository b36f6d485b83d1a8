/**
 * A server whose command cannot be started (a typo, or `npx` not on a desktop host's PATH): the
 * host's first request is answered with why and what to do, as every refusal is, and the proxy
 * ends with the status when the host leaves. It exited at once, and a host showed only
 * "connection closed" (a user pass).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { proxiedTransport } from '../helpers/proxied-server.js';
import { ownedShortDir, proxyFor, waitFor } from '../helpers/proxy.js';

void t.test('a command that cannot be started is told to the host', async (t) => {
  const dir = ownedShortDir(t);
  const d = await startDaemon(t, `version: 1\nservers:\n  fs:\n    roots: [{path: ${dir}}]\n`, {
    dir,
  });
  const started = proxiedTransport({
    server: 'fs',
    socket: d.socket,
    command: [join(dir, 'no-such-mcp-server')],
  });
  const host = new Client({ name: 'test-host', version: '0' }, { capabilities: {} });
  t.teardown(() => host.close());
  await t.rejects(
    host.connect(started.transport),
    /no-such-mcp-server could not be started: .*ENOENT.*\(status 127\); is it on the host's PATH/,
    "the host's initialize is answered with why, and what to do",
  );

  // Raw, for the status: the answer, then the end once the host closes its side.
  const cmd = proxyFor({ server: 'fs', socket: d.socket, extra: [] }, [join(dir, 'nope')]);
  const child = spawn(cmd.command, cmd.args, { env: cmd.env, stdio: ['pipe', 'pipe', 'ignore'] });
  t.teardown(() => child.kill('SIGKILL'));
  const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`,
  );
  await waitFor(() => out.includes('\n'), 30_000, 'the answer');
  t.match(JSON.parse(out), { id: 1, error: { message: /nope could not be started/ } }, 'answered');
  child.stdin.end();
  t.equal(await exit, 127, 'the proxy ends with the status once the host leaves');
});
