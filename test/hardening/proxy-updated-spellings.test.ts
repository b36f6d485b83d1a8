/**
 * `notifications/resources/updated` reaches the host only when the server may read the file its
 * `file:` URI names (server-lines.ts `onUpdated`). Attacked with every spelling a host's URI
 * parser reads as that file while a looser check would not: scheme case, a host of `localhost`,
 * `file:/x`, leading whitespace and tabs, dot segments plain and encoded, encoded letters,
 * backslashes, doubled slashes, a link out of the root, a denied file inside it; `uri` as an array,
 * a number, twice, beside `URI`; `Params` for `params`; in a batch beside an allowed one; sent as a
 * request (with an id), which a host dispatching by method alone acts on like the notification
 * (**was a hole:** relayed unchecked); and a flood of updates of an allowed file while the daemon is
 * down (fail closed: none passes, the proxy keeps answering). A flood while the daemon is stopped
 * (SIGSTOP: slow, not gone) is bounded (update-backlog.ts; **was unbounded:** the proxy held every
 * line until its check was answered): past the backlog's cap updates are dropped, their request
 * form answered at once, and the backlog serves again once the daemon is back.
 *
 * Real daemon, real proxy, a raw host, and a server whose lines the test writes byte for byte.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { MAX_WAITING_UPDATES } from '../../proxy/update-backlog.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';
import {
  initialize,
  serverSends,
  startFixtureSession,
  startRawSession,
  type RawSession,
} from '../helpers/raw-session.js';
import { fixtureServer } from '../helpers/repo.js';
import { spawnDaemon } from '../helpers/spawn-daemon.js';

const WAIT_MS = 30_000;
const UPDATED = 'notifications/resources/updated';
/** An update line whose params are `params` (a JSON text), tagged `tag` in `_meta`. */
const update = (tag: string, params: string, id = ''): string =>
  `{"jsonrpc":"2.0",${id}"method":"${UPDATED}","params":{"_meta":{"tag":"${tag}"},${params}}}`;
const withUri = (tag: string, uri: unknown): string => update(tag, `"uri":${JSON.stringify(uri)}`);

/** How many of the server's updates the proxy has stopped, by its log. */
const stopped = (s: RawSession): number =>
  s
    .stderr()
    .split('\n')
    .filter((l) => l.includes(`the server's ${UPDATED}`)).length;

void t.test('resources/updated: every spelling of a file the server may not read', async (t) => {
  const { s, daemon, w } = await startFixtureSession(t, {
    server: 'upd',
    fixture: fixtureServer('hostile-lines.mjs'),
    policy: `    deny:\n      - "**/vault"\n`,
    prepare: (w) => {
      mkdirSync(join(w, 'in/vault'));
      writeFileSync(join(w, 'in/vault/k.txt'), 'k');
      writeFileSync(join(w, 'in/ok.txt'), 'ok');
      symlinkSync(join(w, 'out/o.txt'), join(w, 'in/lnk'));
    },
  });
  const out = `${w}/out/o.txt`;
  const denied: [string, string][] = [
    ['plain', withUri('D-plain', `file://${out}`)],
    ['upper-case scheme', withUri('D-upper', `FILE://${out}`)],
    ['file:/x', withUri('D-oneslash', `file:${out}`)],
    ['file:////x', withUri('D-fourslash', `file:///${out}`)],
    ['localhost', withUri('D-localhost', `file://localhost${out}`)],
    ['LOCALHOST', withUri('D-LOCALHOST', `file://LOCALHOST${out}`)],
    ['leading space', withUri('D-space', ` file://${out}`)],
    ['leading tab', withUri('D-tab', `\tfile://${out}`)],
    ['tab in the scheme', withUri('D-tabscheme', `fi\tle://${out}`)],
    ['trailing newline', withUri('D-newline', `file://${out}\n`)],
    ['..', withUri('D-dots', `file://${w}/in/../out/o.txt`)],
    ['%2e%2e', withUri('D-encdots', `file://${w}/in/%2e%2e/out/o.txt`)],
    ['an encoded letter', withUri('D-encletter', `file://${w}/%6Fut/o.txt`)],
    ['an encoded slash', withUri('D-encslash', `file://${w}/out%2Fo.txt`)],
    ['backslashes', withUri('D-backslash', `file://${w}\\in\\..\\out\\o.txt`)],
    ['doubled slashes', withUri('D-doubled', `file://${w}//out//o.txt`)],
    ['a link out of the root', withUri('D-link', `file://${w}/in/lnk`)],
    ['a denied file in the root', withUri('D-deny', `file://${w}/in/vault/k.txt`)],
    ['a denied directory, trailing slash', withUri('D-denydir', `file://${w}/in/vault/`)],
    ['uri as an array', withUri('D-array', [`file://${out}`])],
    ['uri as an object', withUri('D-object', { href: `file://${out}` })],
    ['uri as a number', withUri('D-number', 7)],
    ['no uri', update('D-none', `"path":"${out}"`)],
    [
      'uri twice, the denied first',
      update('D-twice', `"uri":"file://${out}","uri":"file://${w}/in/ok.txt"`),
    ],
    ['URI beside uri', update('D-URI', `"URI":"file://${out}","uri":"file://${w}/in/ok.txt"`)],
    [
      'Params for params',
      `{"jsonrpc":"2.0","method":"${UPDATED}","Params":{"_meta":{"tag":"D-Params"},"uri":"file://${out}"}}`,
    ],
    ['an escaped scheme', update('D-escaped', `"uri":"\\u0066ile://${out}"`)],
    [
      'escaped slashes in the method',
      `{"jsonrpc":"2.0","method":"notifications\\/resources\\/updated","params":{"_meta":{"tag":"D-method"},"uri":"file://${out}"}}`,
    ],
    ['as a request', update('D-request', `"uri":"file://${out}"`, '"id":"u-req",')],
  ];
  const allowed = [
    withUri('A-plain', `file://${w}/in/ok.txt`),
    withUri('A-other-scheme', 'https://example.com/out/o.txt'),
  ];
  const before = stopped(s);
  await serverSends(s, [...allowed, ...denied.map(([, line]) => line)]);
  // In a batch: the allowed one passes, the denied one not.
  await serverSends(s, [
    `[${withUri('A-batch', `file://${w}/in/ok.txt`)},${withUri('D-batch', `file://${out}`)}]`,
  ]);
  for (const tag of ['A-plain', 'A-other-scheme', 'A-batch']) await s.line(`"${tag}"`, WAIT_MS);
  await waitFor(
    () => stopped(s) - before >= denied.length + 1,
    WAIT_MS,
    `every denied update stopped (${stopped(s) - before} of ${denied.length + 1})\n${s.stderr()}`,
  );
  const host = s.hostLines();
  for (const [what, line] of [...denied, ['in a batch', 'D-batch'] as [string, string]]) {
    const tag = /"(D-[A-Za-z]+)"/.exec(line)?.[1] ?? line;
    t.same(
      host.filter((l) => l.includes(`"${tag}"`)),
      [],
      `${what}: the host never hears of it`,
    );
  }
  // The request form was answered, so the server is not left waiting.
  await waitFor(
    () => s.received().some((l) => l.includes('"u-req"') && l.includes('"error"')),
    WAIT_MS,
    'the server’s request form is answered with an error',
  );

  // The daemon goes away: updates of an allowed file are not relayed unchecked (fail closed).
  await daemon.close();
  const flood = Array.from({ length: 200 }, (_, i) =>
    withUri(`DOWN-${i}`, `file://${w}/in/ok.txt`),
  );
  const beforeFlood = stopped(s);
  await serverSends(s, flood);
  await waitFor(
    () => stopped(s) - beforeFlood >= flood.length,
    WAIT_MS,
    `every update stopped while the daemon is away (${stopped(s) - beforeFlood})`,
  );
  t.same(
    s.hostLines().filter((l) => l.includes('"DOWN-')),
    [],
    'no update passes while the daemon is away',
  );
  await serverSends(s, []);
  t.pass('the proxy still answers after the flood');
});

void t.test('resources/updated: a flood while the daemon is slow is bounded', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'in'), { recursive: true });
  const config = join(dir, 'mcp-roots.yaml');
  writeFileSync(config, `version: 1\nservers:\n  upd:\n    roots:\n      - path: ${w}/in\n`);
  const socket = join(dir, 'run', 'rootsd.sock');
  const daemon = await spawnDaemon(
    ['--config', config, '--socket', socket, '--state-dir', join(dir, 'state')],
    { socket, t, env: { HOME: dir } },
  );
  t.teardown(() => daemon.child.kill('SIGCONT'));
  const s = startRawSession({
    t,
    dir,
    socket,
    server: 'upd',
    fixture: fixtureServer('hostile-lines.mjs'),
  });
  await initialize(s);
  await serverSends(s, [withUri('BEFORE', `file://${w}/in/a.txt`)]);
  await s.line('"BEFORE"', WAIT_MS);

  daemon.child.kill('SIGSTOP');
  // Every notification a file of its own (one check each), then request forms past the cap.
  const notes = 4 * MAX_WAITING_UPDATES;
  const asks = 40;
  const flood = [
    ...Array.from({ length: notes }, (_, i) => withUri(`F-${i}`, `file://${w}/in/f${i}.txt`)),
    ...Array.from({ length: asks }, (_, i) =>
      update(`Q-${i}`, `"uri":"file://${w}/in/q${i}.txt"`, `"id":"q-${i}",`),
    ),
  ];
  await serverSends(s, flood);
  const refusedAsks = () =>
    s.received().filter((l) => /"id":"q-\d+"/.test(l) && l.includes('waiting for mcp-rootsd'));
  await waitFor(
    () => refusedAsks().length === asks,
    WAIT_MS,
    `the request forms past the cap are answered while the daemon is stopped (${refusedAsks().length} of ${asks})\n${s.stderr()}`,
  );
  t.match(s.stderr(), /faster than mcp-rootsd checks them: 256 wait/, 'said once, with the count');
  t.equal(s.stderr().split('faster than mcp-rootsd checks them').length - 1, 1, 'said once');

  daemon.child.kill('SIGCONT');
  await waitFor(
    () => /dropped \d+ of the server's resources\/updated while it flooded them/.test(s.stderr()),
    WAIT_MS,
    `the backlog empties once the daemon answers\n${s.stderr()}`,
  );
  const passed = s.hostLines().filter((l) => /"F-\d+"/.test(l)).length;
  t.ok(
    passed <= MAX_WAITING_UPDATES,
    `at most the backlog's ${MAX_WAITING_UPDATES} passed (${passed})`,
  );
  t.same(
    s.hostLines().filter((l) => l.includes('"Q-')),
    [],
    'no request form past the cap reached the host',
  );
  await serverSends(s, [withUri('AFTER', `file://${w}/in/a.txt`)]);
  await s.line('"AFTER"', WAIT_MS);
  t.pass('an update after the flood passes again');
});
