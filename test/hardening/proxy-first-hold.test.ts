/**
 * The hold at `initialized`: calls wait until the server has fetched and applied its first roots
 * (server-roots.ts, roots-hold.ts). A hold must never let a call reach the server without its
 * check. Attacked by a host that writes everything in one go, before the proxy has answered
 * `initialize`: `initialized` and calls pipelined, a batch of a refused and an allowed call, a call
 * cancelled while it is held, refused calls among allowed ones; and by a server that asks for its
 * roots twice, under odd ids and after the hold's limit. What holds: every refused call is
 * answered by the proxy and never reaches the server, a cancelled call never reaches it, every
 * allowed call does, and each of the server's roots requests gets the policy's roots, never the
 * host.
 *
 * Real daemon, real proxy, a raw host, and a server that logs every line it receives.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';
import { startRawSession } from '../helpers/raw-session.js';
import { fixtureServer } from '../helpers/repo.js';

const WAIT_MS = 30_000;
const b64 = (line: string): string => Buffer.from(line).toString('base64');

void t.test('nothing passes the first hold unchecked', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'in'), { recursive: true });
  mkdirSync(join(w, 'out'));
  writeFileSync(join(w, 'in/ok.txt'), 'ok');
  writeFileSync(join(w, 'out/o.txt'), 'MARK');
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  hold:\n    roots:\n      - path: ${w}/in\n`,
    {
      dir,
    },
  );
  const s = startRawSession({
    t,
    dir,
    socket: d.socket,
    server: 'hold',
    fixture: fixtureServer('hostile-lines.mjs'),
  });
  const call = (id: string, args: object, name = 'send_base64'): object => ({
    jsonrpc: '2.0',
    id,
    method: 'tools/call',
    params: { name, arguments: args },
  });
  const outside = `${w}/out/o.txt`;
  // Everything at once, before the answer to initialize.
  s.send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: '2025-03-26',
      capabilities: { roots: { listChanged: true } },
      clientInfo: { name: 'host', version: '1' },
    },
  });
  s.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  s.send(call('c-ok', { lines: [], path: `${w}/in/ok.txt` }));
  s.send(call('c-out', { lines: [], path: outside }));
  s.send({
    jsonrpc: '2.0',
    id: 'r-out',
    method: 'resources/read',
    params: { uri: `file://${outside}` },
  });
  s.send(call('c-cancelled', { lines: [], path: `${w}/in/ok.txt` }));
  s.send({
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId: 'c-cancelled' },
  });
  s.send(
    `[${JSON.stringify(call('b-out', { lines: [], file: outside }))},${JSON.stringify(call('b-ok', { lines: [] }))}]`,
  );
  // The server asks for roots twice, under an odd id, and the host must never see either.
  s.send(
    call('c-roots', {
      lines: [
        b64('{"jsonrpc":"2.0","id":"r1","method":"roots/list"}'),
        b64('{"jsonrpc":"2.0","id":{"odd":1},"method":"roots/list"}'),
        b64('{"jsonrpc":"2.0","id":"r1","method":"roots/list"}'),
      ],
    }),
  );

  for (const id of ['c-ok', 'c-roots']) {
    const answer = await s.line(`"id":"${id}"`, WAIT_MS);
    t.match(answer, /"sent"/, `${id}: reached the server and was answered`);
  }
  for (const id of ['c-out', 'r-out']) {
    const answer = await s.line(`"id":"${id}"`, WAIT_MS);
    t.match(answer, /mcp-roots-proxy refused/, `${id}: refused by the proxy`);
  }
  // A batch is not relayed at all before the session's revision is known (nor after 2025-06-18).
  for (const id of ['b-out', 'b-ok']) {
    const answer = await s.line(`"id":"${id}"`, WAIT_MS);
    t.match(answer, /"error".*mcp-roots-proxy/, `${id}: answered by the proxy`);
  }
  // The limit passes (2 s), then the server asks again.
  await new Promise((r) => setTimeout(r, 2_200));
  s.send(call('c-late', { lines: [b64('{"jsonrpc":"2.0","id":"r-late","method":"roots/list"}')] }));
  await s.line('"id":"c-late"', WAIT_MS);
  await waitFor(
    () => s.received().filter((l) => l.includes(`file://${w}/in`)).length >= 3,
    WAIT_MS,
    'each roots/list of the server answered with the policy’s roots',
  );

  const received = s.received();
  for (const id of ['c-out', 'r-out', 'b-out', 'b-ok', 'c-cancelled']) {
    t.same(
      received.filter((l) => l.includes(`"${id}"`) && !l.includes('notifications/cancelled')),
      [],
      `${id}: never reached the server`,
    );
  }
  t.same(
    received.filter((l) => l.includes('o.txt')),
    [],
    'the server never saw the path outside its roots',
  );
  t.same(
    s.hostLines().filter((l) => l.includes('roots/list')),
    [],
    'the host never saw the server’s roots requests',
  );
  t.same(
    s.hostLines().filter((l) => l.includes('"c-cancelled"')),
    [],
    'the cancelled call is not answered',
  );
});
