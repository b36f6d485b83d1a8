/**
 * A server whose command cannot be started (a typo, or `npx` not on a desktop host's PATH): the
 * host's first request is answered with why and what to do, as every refusal is, and the proxy
 * ends with the status when the host leaves. It exited at once, and a host showed only
 * "connection closed" (a user pass).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import t, { type Test } from 'tap';
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
  const first = await firstAnswer(t, d.socket, [], join(dir, 'nope'));
  t.match(first.answer, { id: 1, error: { message: /nope could not be started/ } }, 'answered');
  t.equal(first.status, 127, 'the proxy ends with the status once the host leaves');
});

/**
 * The proxy started with `command`: its answer to the host's `initialize`, and the status it ends
 * with once the host closes its side.
 */
async function firstAnswer(
  t: Test,
  socket: string,
  extra: string[],
  command: string,
): Promise<{ answer: unknown; status: number | null }> {
  const cmd = proxyFor({ server: 'fs', socket, extra }, [command]);
  const child = spawn(cmd.command, cmd.args, { env: cmd.env, stdio: ['pipe', 'pipe', 'ignore'] });
  t.teardown(() => child.kill('SIGKILL'));
  const exit = new Promise<number | null>((resolve) => child.once('exit', resolve));
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stdin.write(
    `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`,
  );
  await waitFor(() => out.includes('\n'), 30_000, 'the answer');
  child.stdin.end();
  return { answer: JSON.parse(out), status: await exit };
}

// Sandboxed, the gate inside said "not found" and the host heard only that the server went away
// (a review): each is told as an unsandboxed start tells it, with the same status.
void t.test('a command that cannot run, with or without the sandbox', async (t) => {
  const dir = ownedShortDir(t);
  const d = await startDaemon(t, `version: 1\nservers:\n  fs:\n    roots: [{path: ${dir}}]\n`, {
    dir,
  });
  mkdirSync(join(dir, 'a-directory'));
  writeFileSync(join(dir, 'not-executable'), '#!/bin/sh\n', { mode: 0o644 });
  const rows: [string, number, RegExp, RegExp][] = [
    ['no-such-mcp-server-anywhere', 127, /ENOENT/, /not found on PATH/],
    [join(dir, 'missing'), 127, /ENOENT/, /missing does not exist/],
    [join(dir, 'a-directory'), 126, /EACCES/, /a-directory is not a file/],
    [join(dir, 'not-executable'), 126, /EACCES/, /not-executable is not executable/],
  ];
  for (const [command, status, plain, sandboxed] of rows) {
    for (const [extra, why] of [
      [[], plain],
      [['--sandbox'], sandboxed],
    ] as const) {
      const { answer, status: got } = await firstAnswer(t, d.socket, [...extra], command);
      const mode = extra.length === 0 ? 'unsandboxed' : 'sandboxed';
      t.match(
        answer,
        {
          id: 1,
          error: {
            message: new RegExp(`could not be started: .*${why.source}.*\\(status ${status}\\)`),
          },
        },
        `${mode}, ${command}: why`,
      );
      t.equal(got, status, `${mode}, ${command}: the proxy ends with ${status}`);
    }
  }
});
