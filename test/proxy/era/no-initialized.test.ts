/**
 * A 2025 host that sends `initialize` but never `notifications/initialized`: the proxy still
 * learns the tools before it relays the first call, so an argument only the tool's schema names
 * as a URI is checked (against a server built with the v2 SDK).
 */
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { startDaemon } from '../../helpers/daemon.js';
import { eraWorld } from '../../helpers/era-policy.js';
import { ownedShortDir, waitFor } from '../../helpers/proxy.js';
import { startRawSession } from '../../helpers/raw-session.js';
import { fixtureServer } from '../../helpers/repo.js';

interface Answer {
  id?: number;
  result?: { content?: { text: string }[]; isError?: boolean };
  error?: { code: number; message: string };
}

void t.test('a 2025 host that never sends initialized is enforced', async (t) => {
  const dir = ownedShortDir(t);
  const world = eraWorld(dir, ['v2']);
  const d = await startDaemon(t, world.policy, { dir });
  const s = startRawSession({
    t,
    dir,
    socket: d.socket,
    server: 'v2',
    fixture: fixtureServer('v2-roots.mjs'),
  });
  const find = (id: number) =>
    s
      .hostLines()
      .map((l) => JSON.parse(l) as Answer)
      .find((m) => m.id === id);
  const answer = async (id: number): Promise<Answer> => {
    await waitFor(() => find(id) !== undefined, 120_000, `the answer to ${id}\n${s.stderr()}`);
    return find(id)!;
  };
  s.send({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'no-initialized', version: '0' },
    },
  });
  t.ok((await answer(1)).result, 'initialize is answered');
  const call = (id: number, tool: string, args: object) =>
    s.send({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: args } });

  const outside = [
    ['open', { location: 'file:///etc/passwd' }],
    ['open', { location: pathToFileURL(`${world.w}/out/secret.txt`).href }],
    ['stamp', { target: pathToFileURL(`${world.w}/ro/r.txt`).href }],
  ] as const;
  let id = 2;
  for (const [tool, args] of outside) {
    call(id, tool, args);
    const a = await answer(id++);
    t.equal(a.result?.isError, true, `${tool} ${JSON.stringify(args)} is refused`);
    t.match(a.result?.content?.[0]?.text, `mcp-roots-proxy refused ${tool}`);
  }
  call(id, 'open', { location: pathToFileURL(`${world.w}/ro/r.txt`).href });
  const allowed = await answer(id);
  t.notOk(allowed.result?.isError, 'a read in the read-only root is relayed (learnt read-only)');
  t.match(s.stderr(), /learnt 5 tools/, 'from the server’s tools/list');
});
