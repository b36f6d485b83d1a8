/**
 * Asking the person in a 2026-07-28 session: a v2 SDK host pinned to that revision, through the
 * built proxy, to server-filesystem 2.0.1 started on the whole workspace (in this era it never
 * asks for roots, so only the proxy keeps it inside the policy). The proxy's question travels as
 * an input request in the call's answer; the host's retry brings the answer and the same call
 * goes on.
 */
import t from 'tap';
import { startAskHost, type ElicitAnswer, type ElicitParams } from '../helpers/ask-host.js';
import { rootsctl } from '../helpers/cli.js';
import { askPerson, startAskDaemon } from '../helpers/ask-setup.js';
import { FS2_SERVER } from '../helpers/era-host.js';

void t.test('asking the person through a 2026-07-28 host', async (t) => {
  const files = ['home/h.txt', 'out1/a.txt', 'out2/b.txt', 'out2/b2.txt', 'secret/s.txt'];
  const { w, d, admin } = await startAskDaemon(
    t,
    Object.fromEntries(files.map((rel) => [rel, `${rel} text`])),
    (w) => `version: 1
ask: true
deny:
  - ${w}/secret
servers:
  "*":
    roots:
      - path: ${w}/home
`,
  );
  const person = askPerson<ElicitParams, ElicitAnswer>(() => ({ action: 'decline' }));
  const { asked } = person;
  const host = await startAskHost(t, {
    server: 'fs2',
    socket: d.socket,
    serverCommand: [process.execPath, FS2_SERVER, w],
    elicit: person.elicit,
  });

  await t.test(
    'accepted for a directory: the same call succeeds, and the grant shows',
    async (t) => {
      person.answer = () => ({
        action: 'accept',
        content: { scope: 'directory', duration: '10m', readOnly: false },
      });
      const r = await host.call('read_text_file', { path: `${w}/out1/a.txt` });
      t.same(r, { text: 'out1/a.txt text', isError: false });
      t.equal(asked.length, 1, 'asked once');
      const q = asked[0]!;
      t.match(q.message, JSON.stringify(`${w}/out1/a.txt`), 'the exact path, escaped');
      t.match(q.message, '"fs2"', 'the server');
      t.match(q.message, '"read_text_file"', 'the tool');
      t.ok(q.requestedSchema?.properties?.scope, 'the choices');
      const g = (await admin.grants()).grants.find((x) => x.path === `${w}/out1`);
      t.equal(g?.server, 'fs2', 'the directory is granted to the server');
      t.equal(g?.readOnly, false);
      const cli = await rootsctl(['grants', '--socket', d.socket], { env: { HOME: d.dir } });
      t.match(cli.out, /fs2\s+~\/w\/out1\s+read-write/, 'rootsctl grants shows it');
      const write = await host.call('write_file', { path: `${w}/out1/new.txt`, content: 'n' });
      t.equal(write.isError, false, 'the grant covers the directory');
      t.equal(asked.length, 1, 'not asked again while the grant lasts');
    },
  );

  await t.test('declined: refused, and not asked again at once', async (t) => {
    person.answer = () => ({ action: 'decline' });
    const n = asked.length;
    const r = await host.call('read_text_file', { path: `${w}/out2/b.txt` });
    t.equal(r.isError, true);
    t.match(r.text, 'outside every root');
    t.equal(asked.length, n + 1);
    const again = await host.call('read_text_file', { path: `${w}/out2/b.txt` });
    t.equal(again.isError, true);
    t.match(again.text, 'not asked again before');
    t.equal(asked.length, n + 1, 'the person is not asked twice');
    const sibling = await host.call('read_text_file', { path: `${w}/out2/b2.txt` });
    t.match(sibling.text, `the person refused a grant of ${JSON.stringify(`${w}/out2`)}`);
    t.equal(asked.length, n + 1, 'nor asked about another file of that directory');
    t.notOk(
      (await admin.grants()).grants.some((g) => g.path === `${w}/out2`),
      'nothing granted',
    );
  });

  await t.test('denied paths are never asked about', async (t) => {
    person.answer = () => ({ action: 'accept', content: { scope: 'directory', duration: '10m' } });
    const n = asked.length;
    const r = await host.call('read_text_file', { path: `${w}/secret/s.txt` });
    t.equal(r.isError, true);
    t.match(r.text, 'denied');
    t.equal(asked.length, n, 'never asked');
  });
});
