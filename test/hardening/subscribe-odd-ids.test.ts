/**
 * `resources/subscribe`, `subscriptions/listen` and `completion/complete` with ids of other types
 * (null, a boolean, an object, an array, a fraction, a huge number, a string that looks like a
 * number). Whatever the proxy makes of such an id, the denied file must not reach a server that
 * reads any `id` member as a request's (the fixture answers every line that has one).
 *
 * (Attacks that held when written: every row passes.)
 *
 * Real daemon, real proxy, a raw host, and the fixture that records every subscription it gets.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { initialize, startRawSession } from '../helpers/raw-session.js';
import { fixtureServer } from '../helpers/repo.js';

void t.test('odd ids do not carry a denied subscription past the proxy', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'vault'), { recursive: true });
  writeFileSync(join(w, 'vault/key.txt'), 'secret');
  const record = join(dir, 'subscribed.jsonl');
  writeFileSync(record, '');
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  subs:\n    roots:\n      - path: ${w}\n    deny:\n      - ${w}/vault\n`,
    { dir },
  );
  const s = startRawSession({
    t,
    dir,
    socket: d.socket,
    server: 'subs',
    fixture: fixtureServer('subscriptions.mjs'),
    serverArgs: [`--record=${record}`],
  });
  await initialize(s);
  const denied = `file://${w}/vault/key.txt`;
  const ids = ['null', 'true', '{}', '[1]', '1.5', '1e400', '"7"', '-0', '9007199254740993'];
  for (const id of ids) {
    s.child.stdin.write(
      `{"jsonrpc":"2.0","id":${id},"method":"resources/subscribe","params":{"uri":${JSON.stringify(denied)}}}\n`,
    );
    s.child.stdin.write(
      `{"jsonrpc":"2.0","id":${id},"method":"subscriptions/listen","params":{"notifications":{"resourceSubscriptions":[${JSON.stringify(denied)}]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"h","version":"1"}}}}\n`,
    );
  }
  s.send({ jsonrpc: '2.0', id: 999, method: 'ping', params: {} });
  await s.line('"id":999,', 10_000);
  await new Promise((r) => setTimeout(r, 300));
  const seen = readFileSync(record, 'utf8')
    .split('\n')
    .filter((l) => l.includes('vault/key.txt'));
  t.same(seen, [], 'the server never subscribed to the denied file');
});
