/**
 * `resources/subscribe` whose `uri` is not a string. The proxy checks a string `uri` only and
 * relays any other shape unchecked, while a server that reads the member loosely (a template
 * literal, `String(uri)`, `[].concat(uri)[0]`) subscribes to the file inside: `["file:///…/key.txt"]`
 * is `file:///…/key.txt` to `${uri}`. `completion/complete` refuses the shapes a server may read
 * otherwise, and `subscriptions/listen` refuses a filter that is not an array of strings; a
 * subscription should refuse them too.
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

void t.test('a subscription whose uri is not a string is refused', async (t) => {
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
  const shapes: [string, unknown][] = [
    ['an array holding the URI', [denied]],
    ['an array of two, the denied URI first', [denied, `file://${w}/ok.txt`]],
  ];
  let id = 200;
  for (const [what, uri] of shapes) {
    s.send({ jsonrpc: '2.0', id: ++id, method: 'resources/subscribe', params: { uri } });
    const line = await s.line(`"id":${id},`, 10_000).catch(() => undefined);
    t.match(line, /mcp-roots-proxy refused/, `${what}: refused: ${line?.slice(0, 200)}`);
  }
  // resources/read takes the same path through the proxy: a uri that is not a string goes unchecked.
  s.send({ jsonrpc: '2.0', id: ++id, method: 'resources/read', params: { uri: [denied] } });
  const read = await s.line(`"id":${id},`, 10_000).catch(() => undefined);
  t.match(
    read,
    /mcp-roots-proxy refused/,
    `resources/read of [uri]: refused: ${read?.slice(0, 200)}`,
  );
  s.send({ jsonrpc: '2.0', id: ++id, method: 'ping', params: {} });
  await s.line(`"id":${id},`, 10_000).catch(() => undefined);
  const seen = readFileSync(record, 'utf8')
    .split('\n')
    .filter((l) => l.includes('resources/subscribe'));
  t.same(seen, [], 'the server was never asked to subscribe to any shape of the denied URI');
});
