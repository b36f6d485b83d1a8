/**
 * A method MCP does not define (a server's own `x/read`, an experimental one) went to the server
 * unchecked, whatever its params named: an attacker pass found `{"path": <outside>}` relayed. The
 * proxy cannot know what the server does with such a line, so every string in its params that is
 * a path by name or by value is checked, as a write (`_meta` aside). A refused request gets error
 * -32602; a refused notification, which cannot be answered, is dropped with a warning. Methods
 * MCP defines keep their own rules, and a custom request naming no path passes.
 *
 * Real daemon, real proxy, a raw host, and a server that logs every line it gets.
 */
import { join } from 'node:path';
import t from 'tap';
import { startFixtureSession } from '../helpers/raw-session.js';
import { fixtureServer } from '../helpers/repo.js';
import { waitFor } from '../helpers/proxy.js';

void t.test('requests of methods MCP does not define', async (t) => {
  const { s, w } = await startFixtureSession(t, {
    server: 'wire',
    fixture: fixtureServer('wire.mjs'),
    files: { 'in/a.txt': 'a' },
  });
  const outside = join(w, 'out/o.txt');
  const refused: [string, Record<string, unknown>, RegExp][] = [
    ['a path by name', { path: outside }, /outside every root/],
    ['a path by value', { query: outside }, /outside every root/],
    ['a nested path', { options: { where: [`file://${outside}`] } }, /outside every root/],
    ['a relative path by name', { file: 'a.txt' }, /relative path/],
    ['a spaced name and ..', { q: `/no such dir/..${outside}` }, /\.\. segment/],
  ];
  let id = 100;
  for (const [what, params, why] of refused) {
    s.send({ jsonrpc: '2.0', id: ++id, method: 'x/read', params });
    const line = await s.line(`"id":${id},`);
    t.match(line, /"code":-32602/, `${what}: an error`);
    t.match(line, /mcp-roots-proxy refused the request x\/read/, `${what}: by the proxy`);
    t.match(line, why, `${what}: ${line.slice(0, 300)}`);
    t.notOk(
      s.received().some((l) => l.includes(`"id":${id},`)),
      `${what}: the server never got it`,
    );
  }
  // Inside the root (a write there is allowed), or no path at all: relayed.
  for (const [what, params] of [
    ['a path inside the root', { path: join(w, 'in/a.txt') }],
    ['no path', { note: 'hello', count: 2 }],
  ] as const) {
    s.send({ jsonrpc: '2.0', id: ++id, method: 'x/read', params });
    const mine = id;
    await waitFor(
      () => s.received().some((l) => l.includes(`"id":${mine},`)),
      10_000,
      `${what}: relayed`,
    );
    t.pass(`${what}: relayed`);
  }
  // A notification of its own naming a path outside: dropped, with a warning; one inside, or
  // naming none, relayed in its place among the lines around it.
  s.send({ jsonrpc: '2.0', method: 'x/touched', params: { path: outside } });
  s.send({ jsonrpc: '2.0', method: 'x/touched', params: { path: join(w, 'in/a.txt') } });
  s.send({ jsonrpc: '2.0', method: 'x/touched', params: { note: 'fine' } });
  await waitFor(
    () => s.received().some((l) => l.includes('"x/touched"') && l.includes('fine')),
    10_000,
    'the notification without a path relayed',
  );
  const touched = s.received().filter((l) => l.includes('"x/touched"'));
  t.equal(touched.length, 2, 'two of three relayed');
  t.match(touched[0], join(w, 'in/a.txt'), 'the one inside the root, first');
  t.notOk(
    touched.some((l) => l.includes(outside)),
    'the one naming a path outside was not',
  );
  t.match(s.stderr(), /dropped the host's "x\/touched": .*outside every root/);
  // A method MCP defines keeps its rules: a cancellation's free-text reason is not a path.
  s.send({
    jsonrpc: '2.0',
    method: 'notifications/cancelled',
    params: { requestId: 999, reason: outside },
  });
  await waitFor(
    () => s.received().some((l) => l.includes('notifications/cancelled')),
    10_000,
    'the cancellation relayed',
  );
  t.pass('notifications/cancelled relayed');
});
