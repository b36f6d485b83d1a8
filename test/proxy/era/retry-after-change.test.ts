/**
 * The proxy's own retry of a request whose server asked for roots (input-required.ts) carries the
 * request as it was checked when it came. A deny or lockdown while the server held the first leg
 * did not apply to it: the retry reached the server unchecked, and the file denied since was read
 * (an attacker pass). Now the retry is sent only while the server's roots are still those of the
 * daemon's list the request was checked under; otherwise the host is told to make the request
 * again, and that one is checked afresh.
 */
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { rootsctl } from '../../helpers/cli.js';
import { startDaemon, type TestDaemon } from '../../helpers/daemon.js';
import { ownedShortDir, waitFor } from '../../helpers/proxy.js';
import { startRawSession, type RawSession } from '../../helpers/raw-session.js';
import { fixtureServer } from '../../helpers/repo.js';

const FIXTURE = fixtureServer('held-roots-read.mjs');
const MARK = 'the secret itself';
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'h', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
const read = (id: number, path: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { _meta: META, name: 'read', arguments: { path } },
});

/** How many lists of the server's roots the proxy has taken in (its debug log). */
const lists = (s: RawSession): number => s.stderr().split('roots of atk (revision').length - 1;

/**
 * `file` read in a session whose server holds the call's first leg while `change` is made, and
 * released once the proxy has the daemon's new list: the host's answer.
 */
async function heldRead(
  t: Test,
  opts: { dir: string; policy: string; file: string; serverArgs?: string[] },
  change: (d: TestDaemon) => Promise<void>,
): Promise<string> {
  const d = await startDaemon(t, opts.policy, { dir: opts.dir });
  const s = startRawSession({
    t,
    dir: opts.dir,
    socket: d.socket,
    server: 'atk',
    fixture: FIXTURE,
    serverArgs: opts.serverArgs ?? [],
  });
  s.send(read(1, opts.file));
  await waitFor(() => s.received().some((l) => l.includes('"tools/call"')), 30_000, 'relayed');
  const before = lists(s);
  await change(d);
  await waitFor(() => lists(s) > before, 30_000, `the new list\n${s.stderr()}`);
  // A call made now is refused by the proxy's check.
  s.send(read(2, opts.file));
  t.notMatch(await s.line('"id":2'), MARK, 'a call made now is refused');
  const log = readdirSync(opts.dir).find((f) => /^received-.*\.log$/.test(f))!;
  writeFileSync(join(opts.dir, `${log}.go`), '');
  return s.line('"id":1');
}

void t.test('a deny added while the server holds the call applies to the retry', async (t) => {
  const dir = ownedShortDir(t);
  const root = join(dir, 'w', 'in');
  mkdirSync(join(root, 'secret'), { recursive: true });
  const file = join(root, 'secret', 's.txt');
  writeFileSync(file, MARK);
  const policy = `version: 1\nservers:\n  atk:\n    roots:\n      - path: ${root}\n`;
  const answer = await heldRead(t, { dir, policy, file }, async (d) => {
    d.writePolicy(`${policy}    deny:\n      - ${root}/secret\n`);
    await Promise.resolve();
  });
  t.notMatch(answer, MARK, 'the retry does not read the file denied since');
  t.match(answer, /roots changed .*while it asked for them.*make it again/, 'the host is told');
});

void t.test('lockdown while the server holds the call applies to the retry', async (t) => {
  const dir = ownedShortDir(t);
  const root = join(dir, 'w', 'in');
  mkdirSync(root, { recursive: true });
  const file = join(root, 'f.txt');
  writeFileSync(file, MARK);
  const policy = `version: 1\nservers:\n  atk:\n    roots:\n      - path: ${root}\n`;
  // A server that does not keep to its roots: only the proxy stands in the way.
  const answer = await heldRead(
    t,
    { dir, policy, file, serverArgs: ['--ignore-roots'] },
    async (d) => {
      const r = await rootsctl(['--socket', d.socket, 'lockdown']);
      t.equal(r.code, 0, 'lockdown on');
    },
  );
  t.notMatch(answer, MARK, 'the retry is not sent under lockdown');
});

void t.test('with nothing changed the retry goes on', async (t) => {
  const dir = ownedShortDir(t);
  const root = join(dir, 'w', 'in');
  mkdirSync(root, { recursive: true });
  const file = join(root, 'f.txt');
  writeFileSync(file, MARK);
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  atk:\n    roots:\n      - path: ${root}\n`,
    {
      dir,
    },
  );
  const s = startRawSession({ t, dir, socket: d.socket, server: 'atk', fixture: FIXTURE });
  s.send(read(1, file));
  await waitFor(() => s.received().some((l) => l.includes('"tools/call"')), 30_000, 'relayed');
  const log = readdirSync(dir).find((f) => /^received-.*\.log$/.test(f))!;
  writeFileSync(join(dir, `${log}.go`), '');
  t.match(await s.line('"id":1'), MARK, 'the server read the file with its roots');
});
