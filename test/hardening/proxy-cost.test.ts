/**
 * What one call may cost: a path over the daemon's 1 MiB line cap, too many paths, too many bytes
 * of paths, arguments nested too deep or too many. Through the real proxy and a real daemon, with
 * the real filesystem server and the schema-shapes fixture: each such call is refused alone, with a
 * clear reason, the daemon link stays up, and the next call is answered at once.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { DaemonLink } from '../../proxy/daemon-link.js';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, startProxiedFs, waitFor, type ProxiedServer } from '../helpers/proxy.js';
import { startProxiedShapes, type Answer, type ProxiedShapes } from '../helpers/shapes-server.js';

const MIB = 1024 * 1024;

type Row = [
  what: string,
  run: (c: { fs: ProxiedServer; shapes: ProxiedShapes; w: string }) => Promise<Answer>,
  why: RegExp,
];

let deep: unknown = 'x';
for (let i = 0; i < 100; i++) deep = { a: deep };

const ROWS: Row[] = [
  [
    'a 2 MiB path',
    ({ fs, w }) => fs.call('read_text_file', { path: `${w}/in/${'a'.repeat(2 * MIB)}` }),
    /paths total 2097\d+ bytes; .*at most 262144 bytes of paths in one call/,
  ],
  [
    'a 200 KiB path',
    ({ fs, w }) => fs.call('read_text_file', { path: `${w}/in/${'a/'.repeat(100 * 1024)}` }),
    /longer than any path Linux opens/,
  ],
  [
    'a 5,000-byte path',
    ({ fs, w }) => fs.call('write_file', { path: `${w}/in/${'d/'.repeat(2500)}x`, content: '' }),
    /PATH_MAX.*ENAMETOOLONG/,
  ],
  [
    'a 2 MiB path among good ones',
    ({ fs, w }) =>
      fs.call('read_multiple_files', { paths: [`${w}/in/a.txt`, `/${'b'.repeat(2 * MIB)}`] }),
    /at most 262144 bytes of paths/,
  ],
  [
    '1,001 paths',
    ({ fs, w }) =>
      fs.call('read_multiple_files', {
        paths: Array.from({ length: 1001 }, (_, i) => `${w}/in/${i}`),
      }),
    /1001 paths; mcp-roots-proxy checks at most 1000 in one call: split the call/,
  ],
  [
    '300 paths of 1,000 bytes',
    ({ fs, w }) =>
      fs.call('read_multiple_files', {
        paths: Array.from({ length: 300 }, (_, i) => `${w}/in/${'p'.repeat(1000)}${i}`),
      }),
    /at most 262144 bytes of paths/,
  ],
  [
    'a 2 MiB file: URI in a format: uri argument',
    ({ shapes, w }) =>
      shapes.call('read_uri', { location: `file://${w}/in/${'u'.repeat(2 * MIB)}` }),
    /at most 262144 bytes of paths/,
  ],
  [
    'a 40 KiB file: URI in resources/read',
    ({ shapes, w }) => shapes.read(`file://${w}/in/${'%41'.repeat(14_000)}`),
    /longer than any path Linux opens/,
  ],
  [
    'arguments nested 100 deep',
    ({ shapes }) => shapes.call('no_properties', { deep }),
    /nests deeper than 64 levels/,
  ],
  [
    '100,001 values',
    ({ shapes }) => shapes.call('no_properties', { many: new Array(100_001).fill(1) }),
    /more than 100000 values/,
  ],
];

void t.test('calls that would cost too much are refused alone', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'in'), { recursive: true });
  writeFileSync(join(w, 'in/a.txt'), 'a ok');
  const block = `    roots:\n      - path: ${w}/in\n`;
  const d = await startDaemon(t, `version: 1\nservers:\n  fs:\n${block}  shapes:\n${block}`, {
    dir,
  });
  const [fs, shapes] = await Promise.all([
    startProxiedFs(t, { server: 'fs', socket: d.socket }),
    startProxiedShapes(t, { server: 'shapes', socket: d.socket }),
  ]);
  await waitFor(async () => (await fs.allowed()).length === 1, 10_000, 'the first list');
  await waitFor(() => shapes.stderr().includes('learnt'), 10_000, 'the fixture’s tools');

  for (const [what, run, why] of ROWS) {
    const r = await run({ fs, shapes, w });
    t.equal(r.isError, true, `${what}: an error`);
    t.match(r.text, /mcp-roots-proxy refused /, `${what}: refused by the proxy`);
    t.match(r.text, why, `${what}: ${r.text.slice(0, 300)}`);
    t.ok(r.text.length < 2000, `${what}: the refusal is short (${r.text.length} characters)`);
    // The very next call is checked and answered: nothing was lost.
    t.same(
      await fs.call('read_text_file', { path: `${w}/in/a.txt` }),
      { text: 'a ok', isError: false },
      `${what}: the next call is answered`,
    );
  }
  const logs = fs.stderr() + shapes.stderr();
  t.notMatch(logs, /lost mcp-rootsd/, 'the daemon link never dropped');
  t.notOk(
    d.logs.some((l) => /longer than \d+ bytes/.test(l)),
    'the daemon never saw a line over its cap',
  );
});

void t.test('the daemon link refuses one check over the line cap and stays up', async (t) => {
  const dir = ownedShortDir(t);
  mkdirSync(join(dir, 'in'));
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${dir}/in\n`,
    { dir },
  );
  const link = new DaemonLink({
    server: 'fs',
    socket: d.socket,
    clientInfo: { name: 'test', version: '0' },
  }).start();
  t.teardown(() => link.close());
  await link.whenKnown(10_000);
  const lost: string[] = [];
  link.on('lost', (reason) => lost.push(reason));
  await t.rejects(link.check(`${dir}/in/${'x'.repeat(2 * MIB)}`, 'read'), {
    code: 'PATH_INVALID',
    message: /over the daemon's 1048576-byte line cap/,
  });
  t.ok(link.known, 'the link still knows the roots');
  t.match(await link.check(`${dir}/in/a`, 'read'), { allowed: true }, 'the next check is answered');
  t.same(lost, [], 'the link was never lost');
});
