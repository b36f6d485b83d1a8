/**
 * A call whose `arguments` (or a prompt's) is not a JSON object. MCP says it is one; the proxy
 * found no paths in anything else and relayed the call unchecked, while a lenient server (many
 * hand-written ones parse arguments sent as a JSON string, the shape model APIs give them in)
 * read the path inside. The hostile fixture server is such a server; its `ref` value is a path by
 * value, so the same call with an object is refused.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER } from '../helpers/proxied-server.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { openSession, startRawHost, type HostMessage } from '../helpers/raw-host.js';

const MARK = 'TOKEN=outside every root';

const text = (m: HostMessage): string => JSON.stringify(m.result ?? m.error ?? m);

void t.test('arguments that are not an object are refused', async (t) => {
  const dir = ownedShortDir(t);
  const r = join(dir, 'r');
  mkdirSync(r);
  writeFileSync(join(dir, 'secret.txt'), MARK);
  const d = await startDaemon(t, `version: 1\nservers:\n  h:\n    roots:\n      - path: ${r}\n`, {
    dir,
  });
  const host = startRawHost({
    t,
    server: 'h',
    socket: d.socket,
    serverCommand: [process.execPath, HOSTILE_SERVER],
  });
  await openSession(host);
  const read = { action: 'read', ref: join(dir, 'secret.txt') };

  /** [what, the call's params] */
  const ROWS: [string, Record<string, unknown>][] = [
    ['an object (held before)', { name: 'attempt', arguments: read }],
    ['a JSON string', { name: 'attempt', arguments: JSON.stringify(read) }],
    ['an array', { name: 'attempt', arguments: [read] }],
    ['a number', { name: 'attempt', arguments: 7 }],
  ];
  let n = 0;
  for (const [what, params] of ROWS) {
    const id = `call-${n++}`;
    host.send({ jsonrpc: '2.0', id, method: 'tools/call', params });
    const answer = await host.answer(id);
    t.notMatch(text(answer), /TOKEN/, `${what}: nothing of the secret comes back`);
    t.match(text(answer), /mcp-roots-proxy refused/, `${what}: refused by the proxy`);
  }
  const id = 'prompt';
  host.send({
    jsonrpc: '2.0',
    id,
    method: 'prompts/get',
    params: { name: 'p', arguments: JSON.stringify({ path: join(dir, 'secret.txt') }) },
  });
  t.match(text(await host.answer(id)), /mcp-roots-proxy refused/, 'a prompt: refused');
});
