/**
 * The session keeps answering while a call is checked or held, and a cancelled call stops: through
 * the built proxy, a real mcp-rootsd (a child process, so that it can be stopped mid-check) and the
 * real filesystem server, with a host written by hand so that each id and each answer to the
 * person's question is the test's choice. A call is held deterministically by an ask (the question
 * waits for the test's answer) or by a stopped daemon (the check waits for `roots/check`).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { FS_SERVER, ownedShortDir, waitFor } from '../helpers/proxy.js';
import { openSession, startRawHost, type RawHost } from '../helpers/raw-host.js';
import { spawnDaemon, type DaemonProcess } from '../helpers/spawn-daemon.js';

const call = (id: string, name: string, args: object) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});
const ping = (id: string) => ({ jsonrpc: '2.0', id, method: 'ping' });
const cancel = (id: string) => ({
  jsonrpc: '2.0',
  method: 'notifications/cancelled',
  params: { requestId: id, reason: 'the person pressed stop' },
});
const answerAsk = (ask: { id?: unknown }, action: 'accept' | 'decline', dir = false) => ({
  jsonrpc: '2.0',
  id: ask.id,
  result:
    action === 'accept'
      ? { action, content: { scope: dir ? 'directory' : 'path', duration: '10m', readOnly: false } }
      : { action },
});
const text = (m: { result?: Record<string, unknown> }): string =>
  ((m.result?.content ?? []) as { text?: string }[]).map((c) => c.text ?? '').join('\n');

interface Ctx {
  host: RawHost;
  daemon: DaemonProcess;
  w: string;
  /** Resolves once the server lists `dir` among its allowed directories. */
  serverAllows: (dir: string) => Promise<void>;
}

type Row = [what: string, run: (c: Ctx, t: Test) => Promise<void>];

const ROWS: Row[] = [
  [
    'a ping while a call is held for the person’s answer is answered at once',
    async ({ host, w }, t) => {
      host.send(call('h1', 'write_file', { path: `${w}/out1/x.txt`, content: 'x' }));
      const ask = await host.request('elicitation/create');
      host.send(ping('p1'));
      t.same((await host.answer('p1')).result, {}, 'the server answered the ping');
      t.same(host.answers('h1'), [], 'the held call is still waiting');
      host.send(answerAsk(ask, 'decline'));
      t.match(text(await host.answer('h1')), /refused write_file/, 'declined: refused');
    },
  ],
  [
    'a second call and a tools/list while the first is held go on',
    async ({ host, w }, t) => {
      host.send(call('h2', 'write_file', { path: `${w}/out2/x.txt`, content: 'x' }));
      const ask = await host.request('elicitation/create');
      host.send(call('c2', 'read_text_file', { path: `${w}/in/a.txt` }));
      host.send({ jsonrpc: '2.0', id: 'l2', method: 'tools/list' });
      t.equal(text(await host.answer('c2')), 'a text', 'the second call was checked and answered');
      t.ok((await host.answer('l2')).result?.tools, 'tools/list was answered');
      t.same(host.answers('h2'), [], 'the first is still held');
      host.send(answerAsk(ask, 'decline'));
      t.match(text(await host.answer('h2')), /refused write_file/);
    },
  ],
  [
    'a held call the host cancels is never relayed, nor answered, even once the person accepts',
    async ({ host, w, serverAllows }, t) => {
      host.send(call('h3', 'write_file', { path: `${w}/out3/x.txt`, content: 'x' }));
      const ask = await host.request('elicitation/create');
      host.send(cancel('h3'));
      await host.logged(/cancelled request s:h3 before it reached the server/);
      // The person still says yes: the grant is theirs to give, the cancelled call stays cancelled.
      host.send(answerAsk(ask, 'accept', true));
      await serverAllows(`${w}/out3`);
      host.send(ping('p3'));
      await host.answer('p3');
      t.same(host.answers('h3'), [], 'no answer is owed for a cancelled request');
      t.notOk(existsSync(`${w}/out3/x.txt`), 'the server never ran it');
    },
  ],
  [
    'an id the host cancelled and sent again is the new call’s alone',
    async ({ host, w, serverAllows }, t) => {
      host.send(call('r4', 'write_file', { path: `${w}/out4/x.txt`, content: 'x' }));
      const ask = await host.request('elicitation/create');
      host.send(cancel('r4'));
      host.send(call('r4', 'read_text_file', { path: `${w}/in/a.txt` }));
      t.equal(text(await host.answer('r4')), 'a text', 'the reused id answers the new call');
      host.send(answerAsk(ask, 'accept', true));
      await serverAllows(`${w}/out4`);
      host.send(ping('p4'));
      await host.answer('p4');
      t.equal(host.answers('r4').length, 1, 'one answer for r4, the new call’s');
      t.notOk(existsSync(`${w}/out4/x.txt`), 'the cancelled call never ran');
    },
  ],
  [
    'a call cancelled while its check waits for the daemon stops; a ping meanwhile is answered',
    async ({ host, daemon, w }, t) => {
      daemon.child.kill('SIGSTOP');
      try {
        host.send(call('d5', 'write_file', { path: `${w}/in/d5.txt`, content: 'x' }));
        host.send(ping('p5'));
        t.same((await host.answer('p5')).result, {}, 'a ping is answered while the check waits');
        t.same(host.answers('d5'), [], 'the call is still being checked');
        host.send(cancel('d5'));
        await host.logged(/cancelled request s:d5 before it reached the server/);
        // A new call under the same id, checked once the daemon is back.
        host.send(call('d5', 'read_text_file', { path: `${w}/in/a.txt` }));
      } finally {
        daemon.child.kill('SIGCONT');
      }
      t.equal(text(await host.answer('d5')), 'a text', 'the reused id is the new call’s');
      host.send(call('c5', 'read_text_file', { path: `${w}/in/a.txt` }));
      await host.answer('c5');
      t.equal(host.answers('d5').length, 1, 'the cancelled call was never answered');
      t.notOk(existsSync(`${w}/in/d5.txt`), 'the cancelled write never reached the server');
    },
  ],
  [
    'two requests in flight under one id: the second is refused unchecked, the first goes on',
    async ({ host, w }, t) => {
      host.send(call('h6', 'write_file', { path: `${w}/out6/x.txt`, content: 'x' }));
      const ask = await host.request('elicitation/create');
      host.send(call('h6', 'read_text_file', { path: `${w}/in/a.txt` }));
      const dup = await host.answer('h6');
      t.equal(dup.error?.code, -32600);
      t.match(dup.error?.message, /request id "h6" is already in use/);
      host.send(answerAsk(ask, 'decline'));
      await waitFor(() => host.answers('h6').length === 2, 30_000, 'the first call’s answer');
      t.match(text(host.answers('h6')[1]!), /refused write_file/, 'the first was checked');
    },
  ],
  [
    'a call cancelled while its question waits behind another is never asked about',
    async ({ host, w }, t) => {
      host.send(call('h8', 'write_file', { path: `${w}/out7/x.txt`, content: 'x' }));
      const first = await host.request('elicitation/create');
      host.send(call('q8', 'write_file', { path: `${w}/out8/x.txt`, content: 'x' }));
      host.send(cancel('q8'));
      await host.logged(/cancelled request s:q8 before it reached the server/);
      host.send(answerAsk(first, 'decline'));
      await host.answer('h8');
      // Questions are put one at a time, in order: the next one is the next call's.
      host.send(call('h9', 'write_file', { path: `${w}/out9/x.txt`, content: 'x' }));
      const next = await host.request('elicitation/create');
      t.match(JSON.stringify(next.params), 'out9', 'the cancelled call’s question was skipped');
      host.send(answerAsk(next, 'decline'));
      await host.answer('h9');
      t.same(host.answers('q8'), [], 'and it was never answered');
    },
  ],
  [
    'a ping during the check of 250 deep missing paths is answered, and the call is checked',
    async ({ host, w }, t) => {
      // About 1 KB each: 250 of them stay under the 256 KiB of paths one call may hold.
      const deep = (i: number) => `${w}/in/${'a/'.repeat(480)}${i}`;
      const paths = Array.from({ length: 250 }, (_, i) => deep(i));
      host.send(call('m7', 'read_multiple_files', { paths }));
      host.send(ping('p7'));
      t.same((await host.answer('p7')).result, {});
      const m7 = await host.answer('m7', 120_000);
      t.notMatch(text(m7), /mcp-roots-proxy refused/, 'allowed: the paths are inside the root');
    },
  ],
];

void t.test('the session keeps answering while a call is checked or held', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'in'), { recursive: true });
  for (let i = 1; i <= 9; i++) mkdirSync(join(w, `out${i}`));
  writeFileSync(join(w, 'in/a.txt'), 'a text');
  const config = join(dir, 'mcp-roots.yaml');
  writeFileSync(
    config,
    `version: 1\nask: true\nservers:\n  fs:\n    roots:\n      - path: ${w}/in\n`,
  );
  const socket = join(dir, 'run', 'rootsd.sock');
  const daemon = await spawnDaemon(
    ['--config', config, '--socket', socket, '--state-dir', join(dir, 'state')],
    { socket, t, env: { HOME: dir } },
  );
  const host = startRawHost({
    t,
    server: 'fs',
    socket,
    serverCommand: [process.execPath, FS_SERVER],
  });
  await openSession(host, { elicitation: { form: {} } });
  let n = 0;
  const serverAllows = async (path: string): Promise<void> => {
    await waitFor(
      async () => {
        const id = `allowed-${n++}`;
        host.send(call(id, 'list_allowed_directories', {}));
        return text(await host.answer(id)).includes(path);
      },
      30_000,
      `the server allowing ${path}`,
    );
  };
  await serverAllows(`${w}/in`);

  for (const [what, run] of ROWS)
    await t.test(what, (t) => run({ host, daemon, w, serverAllows }, t));

  t.notMatch(host.stderr(), /handling a host message/, 'no line failed to be handled');
});
