/**
 * A subscription to a directory reports the files below it. MCP lets a server send
 * `notifications/resources/updated` for "a sub-resource of the one that the client actually
 * subscribed to" (SEP "Resource Subscription Correlation": subscribe to `file:///home/projects/`,
 * hear of any file within). The proxy checks the URI subscribed to, the root's directory, which is
 * allowed, and relays every notification the server sends: the host then hears each time a denied
 * file below the root changes, and its name, which is what refusing `resources/subscribe` of that
 * file was for.
 *
 * Real daemon, real proxy, a raw host, and a server that watches the directories it is
 * subscribed to.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { initialize, startRawSession } from '../helpers/raw-session.js';
import { fixtureServer } from '../helpers/repo.js';

void t.test('a subscription to the root does not report a denied file below it', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['docs', 'vault']) mkdirSync(join(w, d), { recursive: true });
  writeFileSync(join(w, 'vault/key.txt'), 'secret');
  writeFileSync(join(w, 'docs/ok.txt'), 'ok');
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  watch:\n    roots:\n      - path: ${w}\n    deny:\n      - ${w}/vault\n`,
    { dir },
  );
  const s = startRawSession({
    t,
    dir,
    socket: d.socket,
    server: 'watch',
    fixture: fixtureServer('dir-watch.mjs'),
  });
  await initialize(s);
  s.send({ jsonrpc: '2.0', id: 1, method: 'resources/subscribe', params: { uri: `file://${w}/` } });
  t.match(await s.line('"id":1,', 10_000), /"result":\{\}/, 'the root directory: subscribed');
  await new Promise((r) => setTimeout(r, 300));

  // The control: a change to an allowed file is reported, so the server is watching.
  writeFileSync(join(w, 'docs/ok.txt'), 'ok, changed');
  await s.line(`docs/ok.txt`, 10_000);
  writeFileSync(join(w, 'vault/key.txt'), 'secret, changed');
  // Then another allowed change, so that anything about the vault has come by the time it does.
  await new Promise((r) => setTimeout(r, 300));
  writeFileSync(join(w, 'docs/ok.txt'), 'ok, changed again');
  await new Promise((r) => setTimeout(r, 500));
  const leaked = s.hostLines().filter((l) => l.includes('vault/key.txt'));
  t.same(leaked, [], 'the host never hears of the denied file');
});
