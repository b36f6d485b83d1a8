/**
 * A `subscriptions/listen` stream is sent again to a restarted server (server-swap.ts). The
 * host's line was relayed with its own roots answers replaced by the policy's, but the replay
 * sent the line as the host wrote it: the host's roots, and the old server's `requestState`,
 * reached the new server (an attacker pass). The replay now carries neither.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../../helpers/daemon.js';
import { ownedShortDir, waitFor } from '../../helpers/proxy.js';
import { startRawSession } from '../../helpers/raw-session.js';
import { fixtureServer } from '../../helpers/repo.js';

const HOST_ROOT = 'file:///host-own-root';
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'h', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': { roots: {} },
};

void t.test("a replayed listen carries neither the host's roots nor a stale state", async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'p', 'a'), { recursive: true });
  const policy = `version: 1\nservers:\n  atk:\n    roots:\n      - path: ${w}/p/*\n`;
  const d = await startDaemon(t, policy, { dir });
  const s = startRawSession({
    t,
    dir,
    socket: d.socket,
    server: 'atk',
    fixture: fixtureServer('listen-roots.mjs'),
    serverArgs: ['{roots}'],
  });
  const listens = () => s.received().filter((l) => l.includes('"subscriptions/listen"'));
  const params = {
    _meta: META,
    notifications: { toolsListChanged: true },
    inputResponses: { where: { roots: [{ uri: HOST_ROOT }] } },
    requestState: 'listen-state',
  };
  s.send({ jsonrpc: '2.0', id: 7, method: 'subscriptions/listen', params });
  await waitFor(() => listens().length === 1, 30_000, 'the listen relayed');
  t.notMatch(listens()[0], HOST_ROOT, "the first server: the host's roots replaced");
  // The roots change: the server, started with {roots}, is restarted and the stream replayed.
  mkdirSync(join(w, 'p', 'b'));
  await waitFor(() => listens().length >= 2, 60_000, `the replay\n${s.stderr()}`);
  const replay = listens()[1]!;
  t.not(replay.split(' ')[0], listens()[0]!.split(' ')[0], 'to the new server');
  t.notMatch(replay, HOST_ROOT, "the new server never gets the host's roots");
  t.notMatch(replay, 'listen-state', "nor the old server's requestState");
});
