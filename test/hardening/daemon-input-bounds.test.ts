/**
 * What one local client can send the daemon, bounded (an attacker pass): a path longer than
 * Linux's PATH_MAX is refused before any work (a 1 MB run of `sub/..` took 50 s, quadratic, and
 * was refused with a false reason); a line that is not UTF-8 gets a parse error, not a decision
 * about a path with U+FFFD in it, and a lone surrogate in a path is refused; one connection
 * subscribes to at most 1,024 servers, and `daemon/status` lists a bounded part of what clients
 * hold (280,000 subscriptions made it 160 MB, past what any client reads).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { RootsClient } from '../../protocol/client.js';
import { shortDir, startDaemon } from '../helpers/daemon.js';
import { rawConnect } from '../helpers/raw.js';

async function daemonWithRoot(t: Test) {
  const dir = shortDir();
  const root = join(dir, 'r');
  mkdirSync(join(root, 'sub'), { recursive: true });
  const d = await startDaemon(t, `version: 1\nservers:\n  fs:\n    roots: [{path: ${root}}]\n`, {
    dir,
  });
  const raw = await rawConnect(d.socket);
  t.teardown(() => raw.close());
  return { d, root, raw };
}

const check = (id: number, path: string) =>
  `${JSON.stringify({ jsonrpc: '2.0', id, method: 'roots/check', params: { server: 'fs', path } })}\n`;

void t.test('a path past PATH_MAX, or not well-formed, is refused before any work', async (t) => {
  const { root, raw } = await daemonWithRoot(t);
  raw.send(check(1, `${root}${'/sub/..'.repeat(140_000)}/f.txt`));
  t.match(
    await raw.next(),
    { id: 1, error: { data: { code: 'PATH_INVALID' }, message: /at most 4095 bytes/ } },
    'a 1 MB path: an error saying why',
  );
  raw.send(check(2, `${root}/${'a/'.repeat(2047)}`));
  t.match(await raw.next(), { id: 2, error: { data: { code: 'PATH_INVALID' } } }, 'one byte past');
  raw.send(check(3, `${root}/${'a/'.repeat(2030)}`));
  t.match(await raw.next(), { id: 3, result: { allowed: true } }, 'within PATH_MAX: decided');
  raw.send(check(4, `${root}/a\ud800b`));
  t.match(
    await raw.next(),
    { id: 4, error: { data: { code: 'PATH_INVALID' }, message: /lone surrogate/ } },
    'a lone surrogate',
  );
  const head = Buffer.from(check(5, `${root}/aXb`).replace('aXb', 'a'), 'utf8');
  const cut = head.indexOf('"}}');
  raw.send(Buffer.concat([head.subarray(0, cut), Buffer.from([0xff]), head.subarray(cut)]));
  t.match(
    await raw.next(),
    { id: null, error: { code: -32700, message: /not UTF-8/ } },
    'bytes that are not UTF-8: a parse error, not a decision',
  );
  raw.send(check(6, `${root}/sub/f.txt`));
  t.match(await raw.next(), { id: 6, result: { allowed: true } }, 'and the connection goes on');
});

void t.test('subscriptions per connection, and daemon/status, are bounded', async (t) => {
  const { d, raw } = await daemonWithRoot(t);
  const subscribe = (id: number) =>
    `${JSON.stringify({ jsonrpc: '2.0', id, method: 'roots/subscribe', params: { server: `s${id}` } })}\n`;
  let lines = '';
  for (let i = 1; i <= 1025; i++) lines += subscribe(i);
  raw.send(lines);
  const answers = [];
  for (let i = 1; i <= 1025; i++) answers.push(await raw.next());
  t.equal(answers.filter((m) => 'result' in m).length, 1024, '1,024 subscriptions taken');
  t.match(
    answers[1024],
    { id: 1025, error: { message: /subscribed to 1024 servers already.*unsubscribe/ } },
    'the next refused, saying what to do',
  );
  const c = await RootsClient.connect({ socket: d.socket });
  t.teardown(() => c.close());
  const s = await c.status();
  const held = s.connections.find((x) => x.more !== undefined);
  t.equal(held?.subscriptions.length, 20, "a connection's first 20 servers are listed");
  t.equal(held?.more, 1004, 'and how many more');
  t.equal(s.subscriptions, 1024, 'the count is whole');
  t.equal(s.servers.length, 201, "the policy's server and the first 200 others");
  t.equal(s.serversNotListed, 824, 'and how many others are not listed');
});
