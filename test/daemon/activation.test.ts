import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { RootsClient } from '../../protocol/client.js';
import { bin } from '../helpers/bin.js';
import { shortDir } from '../helpers/short-dir.js';

/** Everything a child wrote to stderr so far, and a way to wait for a line matching a pattern. */
function stderrOf(child: ChildProcess) {
  let text = '';
  const waiters: { re: RegExp; resolve: () => void }[] = [];
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    text += chunk;
    for (const w of [...waiters]) {
      if (w.re.test(text)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  });
  return {
    text: () => text,
    waitFor(re: RegExp, ms = 10_000): Promise<void> {
      if (re.test(text)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`no ${String(re)} within ${ms} ms; stderr:\n${text}`)),
          ms,
        );
        waiters.push({ re, resolve: () => (clearTimeout(timer), resolve()) });
      });
    },
  };
}

function exited(
  child: ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

void t.test(
  'mcp-rootsd under systemd-socket-activate serves on the socket passed as fd 3',
  async (t) => {
    const dir = shortDir();
    const project = join(dir, 'project');
    mkdirSync(project);
    const config = join(dir, 'mcp-roots.yaml');
    writeFileSync(
      config,
      `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${project}\n        readOnly: true\n`,
    );
    const socket = join(dir, 'rootsd.sock');
    // Like systemd's own .socket unit: the tool owns the socket and execs the daemon on the
    // first connection, so the connection that starts the daemon must be answered too.
    const child = spawn(
      'systemd-socket-activate',
      [
        '--listen',
        socket,
        '-E',
        'JOURNAL_STREAM=8:12345',
        '-E',
        `HOME=${dir}`,
        process.execPath,
        bin('daemon'),
        '--config',
        config,
        '--socket',
        socket,
        '--state-dir',
        join(dir, 'state'),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const stderr = stderrOf(child);
    const clients: RootsClient[] = [];
    t.teardown(async () => {
      await Promise.all(clients.map((c) => c.close()));
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited(child);
      }
      rmSync(dir, { recursive: true, force: true });
    });
    const spawnError = new Promise<never>((_, reject) => child.once('error', reject));
    await Promise.race([stderr.waitFor(/Listening on .* as 3\./), spawnError]);
    t.ok(lstatSync(socket).isSocket(), 'systemd-socket-activate made the socket');
    t.notOk(stderr.text().includes('mcp-rootsd'), 'the daemon has not started yet');

    const first = await RootsClient.connect({
      socket,
      clientInfo: { name: 'activation-test', version: '0' },
    });
    clients.push(first);
    const list = await first.listRoots('fs');
    t.same(
      list.roots.map((r) => [r.uri, r._meta['mcp-roots/readOnly']]),
      [[pathToFileURL(realpathSync(project)).href, true]],
      'the connection that started the daemon is answered',
    );
    await stderr.waitFor(/listening on/);
    t.match(
      stderr.text(),
      `\n<6>mcp-rootsd ${(await first.status()).version} listening on ${socket} (socket activation); policy ${config}\n`,
      'journal priority prefixes under JOURNAL_STREAM',
    );

    const second = await RootsClient.connect({ socket });
    clients.push(second);
    const status = await second.status();
    t.equal(status.socket, socket);
    t.equal(status.pid, child.pid, 'the daemon runs in place of systemd-socket-activate (exec)');
    t.equal(status.clients, 2);

    child.kill('SIGTERM');
    t.same(await exited(child), { code: 0, signal: null }, 'SIGTERM: clean exit');
    t.match(stderr.text(), '<6>SIGTERM received');
    t.ok(existsSync(socket), 'a socket systemd passed in is never unlinked');
  },
);
