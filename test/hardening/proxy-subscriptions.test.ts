/**
 * A subscription tells the host each time a resource changes. The proxy checked `resources/read`
 * of a `file:` URI but relayed `resources/subscribe` of any: a denied file, or one outside every
 * root, and the server then reported its changes to the host. The same for the 2026-07-28
 * `subscriptions/listen`, whose filter names the resources in `resourceSubscriptions`. Both are
 * now checked as `resources/read` is, answered with its error, and a refused one is not restored
 * on a restarted server; nor is one the policy has come to refuse by the time of the restart
 * (checked again); `resources/unsubscribe` passes. Sent without an id (as a notification,
 * never answered, so never checked) they are refused, as `completion/complete` is.
 *
 * Real daemon, real proxy, a raw host, and a server that records every subscription it gets.
 */
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';
import { initialize, startRawSession, type RawSession } from '../helpers/raw-session.js';
import { fixtureServer } from '../helpers/repo.js';

const MODERN = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'host', version: '1' },
};

/** The host line answering request `id`, or undefined when none came within `ms`. */
async function answer(s: RawSession, id: number, ms = 10_000): Promise<string | undefined> {
  return s.line(`"id":${id},`, ms).catch(() => undefined);
}

void t.test('subscriptions name files too', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['docs', 'vault/sub']) mkdirSync(join(w, d), { recursive: true });
  mkdirSync(join(dir, 'outside'));
  writeFileSync(join(w, 'vault/key.txt'), 'secret');
  writeFileSync(join(w, 'vault/sub/k.txt'), 'secret');
  writeFileSync(join(dir, 'outside/o.txt'), 'secret');
  writeFileSync(join(w, 'docs/ok.txt'), 'ok');
  symlinkSync('../vault/sub', join(w, 'docs/lnk'));
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

  const ok = `file://${w}/docs/ok.txt`;
  const forbidden = [
    ['a denied file', `file://${w}/vault/key.txt`, /denied/],
    ['a file outside every root', `file://${dir}/outside/o.txt`, /outside/],
    ['a link into the denied directory', `file://${w}/docs/lnk/k.txt`, /denied/],
    ['a dot segment after a link', `file://${w}/docs/lnk/../key.txt`, /dot segment/],
    ['a leading space', ` file://${w}/vault/key.txt`, /raw space/],
  ] as const;

  let id = 100;
  for (const [what, uri, why] of forbidden) {
    s.send({ jsonrpc: '2.0', id: ++id, method: 'resources/subscribe', params: { uri } });
    const line = await answer(s, id);
    t.match(line, /"code":-32002/, `resources/subscribe, ${what}: refused as resources/read is`);
    t.match(line, /mcp-roots-proxy refused/, `resources/subscribe, ${what}: by the proxy`);
    t.match(line, why, `resources/subscribe, ${what}: ${line?.slice(0, 300)}`);
  }
  for (const [what, uri] of [
    ['an allowed file', ok],
    ['a URI of another scheme', 'notes://today'],
  ]) {
    s.send({ jsonrpc: '2.0', id: ++id, method: 'resources/subscribe', params: { uri } });
    t.match(await answer(s, id), /"result":\{\}/, `resources/subscribe, ${what}: relayed`);
  }
  s.send({
    jsonrpc: '2.0',
    id: ++id,
    method: 'resources/unsubscribe',
    params: { uri: forbidden[0][1] },
  });
  t.match(await answer(s, id), /"result":\{\}/, 'resources/unsubscribe of a denied file: relayed');

  // 2026-07-28: the resources a stream subscribes to are in its filter.
  const listen = (listenId: number, notifications: unknown) =>
    s.send({
      jsonrpc: '2.0',
      id: listenId,
      method: 'subscriptions/listen',
      params: { notifications, _meta: MODERN },
    });
  for (const [what, uri, why] of forbidden) {
    listen(++id, { toolsListChanged: true, resourceSubscriptions: [ok, uri] });
    const line = await answer(s, id);
    t.match(line, /"code":-32602/, `subscriptions/listen, ${what}: refused`);
    t.match(line, /mcp-roots-proxy refused/, `subscriptions/listen, ${what}: by the proxy`);
    t.match(line, why, `subscriptions/listen, ${what}: ${line?.slice(0, 300)}`);
  }
  listen(++id, { resourceSubscriptions: forbidden[0][1] });
  t.match(
    await answer(s, id),
    /mcp-roots-proxy refused .*not an array of URIs/,
    'subscriptions/listen, a URI where a list is expected: refused',
  );
  listen(++id, { toolsListChanged: true, resourceSubscriptions: [ok] });
  t.ok(
    await s.line(`"io.modelcontextprotocol/subscriptionId":${id}`),
    'subscriptions/listen of an allowed file: the stream is acknowledged',
  );

  // Spellings a loose reader takes for the members the proxy checks.
  listen(++id, { ResourceSubscriptions: [forbidden[0][1]] });
  t.match(
    await answer(s, id),
    /not passed to the server: the key \\"ResourceSubscriptions\\" .*is \\"resourceSubscriptions\\"/,
    'subscriptions/listen, resourceSubscriptions spelled loosely: refused',
  );

  // Without an id they would never be answered, so never checked.
  for (const method of ['resources/subscribe', 'subscriptions/listen', 'completion/complete']) {
    const before = s.hostLines().length;
    s.send({ jsonrpc: '2.0', method, params: { uri: forbidden[0][1] } });
    await s.line(`${method} without an id is never checked`, 10_000).catch(() => undefined);
    t.ok(
      s
        .hostLines()
        .slice(before)
        .some((l) => l.includes(`${method} without an id is never checked`)),
      `${method} as a notification: refused`,
    );
  }

  // What the server was asked to watch: only what the policy lets it read.
  s.send({ jsonrpc: '2.0', id: ++id, method: 'ping', params: {} });
  await answer(s, id);
  const seen = readFileSync(record, 'utf8')
    .split('\n')
    .filter((l) => /subscribe|listen/.test(l));
  for (const [what, uri] of forbidden) {
    t.notOk(
      seen.some((l) => l.includes(JSON.stringify(uri).slice(1, -1))),
      `the server never subscribed to ${what}`,
    );
  }
  t.ok(
    seen.some((l) => l.includes(ok)),
    'it subscribed to the allowed file',
  );
});

void t.test(
  'a subscription the policy now denies is not restored on a restarted server',
  async (t) => {
    const dir = ownedShortDir(t);
    const w = join(dir, 'w');
    mkdirSync(join(w, 'docs'), { recursive: true });
    mkdirSync(join(dir, 'more'));
    writeFileSync(join(w, 'docs/ok.txt'), 'ok');
    const record = join(dir, 'subscribed.jsonl');
    writeFileSync(record, '');
    const policy = `version: 1\nservers:\n  subs:\n    roots:\n      - path: ${w}\n`;
    const d = await startDaemon(t, policy, { dir });
    const s = startRawSession({
      t,
      dir,
      socket: d.socket,
      server: 'subs',
      fixture: fixtureServer('subscriptions.mjs'),
      // `{roots}`: a new root restarts the server.
      serverArgs: [`--record=${record}`, '{roots}'],
    });
    await initialize(s);
    const ok = `file://${w}/docs/ok.txt`;
    s.send({ jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: ok } });
    t.match(await answer(s, 1), /"result":\{\}/, 'subscribed while allowed');
    s.send({
      jsonrpc: '2.0',
      id: 2,
      method: 'subscriptions/listen',
      params: { notifications: { resourceSubscriptions: [ok] }, _meta: MODERN },
    });
    await s.line('"io.modelcontextprotocol/subscriptionId":2');
    const pids = () => new Set(recorded(record).map((r) => r.pid));
    t.equal(pids().size, 1, 'one server so far');

    // The person denies the file, and a new root restarts the server.
    d.writePolicy(`${policy}      - path: ${dir}/more\n    deny:\n      - ${w}/docs\n`);
    await waitFor(() => pids().size === 2, 30_000, 'a second server');
    const stream = await answer(s, 2, 30_000);
    t.match(
      stream,
      /"error":.*mcp-roots-proxy refused .*denied.*the stream ends/,
      'the stream ends',
    );
    s.send({ jsonrpc: '2.0', id: 3, method: 'ping', params: {} });
    await answer(s, 3, 30_000);
    const second = recorded(record).filter((r) => r.pid !== recorded(record)[0]!.pid);
    t.notOk(
      second.some((r) => r.method === 'resources/subscribe'),
      'the new server is not subscribed to the denied file',
    );
    t.notOk(
      second.some((r) => r.method === 'subscriptions/listen'),
      'nor given the stream that names it',
    );
  },
);

/** What the subscriptions fixture recorded: one entry per request it noted. */
function recorded(file: string): { pid: number; method: string }[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { pid: number; method: string });
}
