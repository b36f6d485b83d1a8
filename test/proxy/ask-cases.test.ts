/**
 * Asking the person in a 2025 session, the cases around the plain question: a write in a
 * read-only root under `ask: {write: true}`, lockdown while a question is open, calls that queue
 * behind one question, a question nobody answers, whose dialog the proxy closes, a dismissed
 * question, and a call of a tool the server never listed.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import t from 'tap';
import { askPerson, startAskDaemon } from '../helpers/ask-setup.js';
import { startProxiedFs, waitFor } from '../helpers/proxy.js';

type Params = ElicitRequest['params'];

const ACCEPT_DIR: ElicitResult = {
  action: 'accept',
  content: { scope: 'directory', duration: '10m', readOnly: false },
};

void t.test('asking the person: writes, lockdown, queues, no answer', async (t) => {
  const files = [
    'home/h.txt',
    'ro/sub/x.txt',
    'ro/other/y.txt',
    'lock/l.txt',
    'q1/a.txt',
    'q1/b.txt',
    'q2/c.txt',
    'late/z.txt',
    'dis/a.txt',
    'dis/b.txt',
    'unl/u.txt',
    'q3/a.txt',
    'q3/b.txt',
  ];
  const { w, d, admin } = await startAskDaemon(
    t,
    Object.fromEntries(files.map((rel) => [rel, rel])),
    (w) => `version: 1
ask: true
servers:
  fs:
    ask: {write: true}
    roots:
      - path: ${w}/home
      - path: ${w}/ro
        readOnly: true
  silent:
    roots:
      - path: ${w}/home
`,
  );
  const granted = async (server: string, sub: string) =>
    (await admin.grants()).grants.find((g) => g.server === server && g.path === join(w, sub));

  const person = askPerson<Params, ElicitResult>(() => ACCEPT_DIR);
  const { asked } = person;
  const fs = await startProxiedFs(t, { server: 'fs', socket: d.socket, elicit: person.elicit });
  let closed = 0;
  const silent = await startProxiedFs(t, {
    server: 'silent',
    socket: d.socket,
    extra: ['--ask-timeout', '1'],
    // The person never answers; the dialog stays until the proxy withdraws the question.
    elicit: (_p, signal) =>
      new Promise<ElicitResult>((_resolve, reject) => {
        signal.addEventListener('abort', () => {
          closed++;
          reject(new Error('withdrawn'));
        });
      }),
  });
  for (const p of [fs, silent]) {
    await waitFor(async () => (await p.allowed()).includes(`${w}/home`), 30_000, 'first list');
  }

  await t.test('ask: {write: true}: a write in a read-only root is asked about', async (t) => {
    const n = asked.length;
    const r = await fs.call('write_file', { path: `${w}/ro/sub/x.txt`, content: 'written' });
    t.equal(r.isError, false, r.text);
    t.equal(asked.length, n + 1, 'asked once');
    t.match(asked[n]!.message, 'write');
    t.match(asked[n]!.message, 'read-only root');
    t.equal((await granted('fs', 'ro/sub'))?.readOnly, false, 'a read-write grant inside it');
    t.equal(readFileSync(`${w}/ro/sub/x.txt`, 'utf8'), 'written');
    const read = await fs.call('read_text_file', { path: `${w}/ro/x.txt` });
    t.match(read.text, 'ENOENT', 'reads in the read-only root were never asked about');
    t.equal(asked.length, n + 1);
  });

  await t.test(
    'a host that cannot be asked gets the grant command for a read-only root',
    async (t) => {
      const plain = await startProxiedFs(t, { server: 'fs', socket: d.socket });
      const r = await plain.call('write_file', { path: `${w}/ro/other/y.txt`, content: 'no' });
      t.equal(r.isError, true);
      t.match(r.text, 'read-only root');
      t.match(r.text, new RegExp(`to allow it, run: .* grant fs ${w}/ro/other --for 1h$`));
      t.equal(readFileSync(`${w}/ro/other/y.txt`, 'utf8'), 'ro/other/y.txt');
    },
  );

  await t.test('lockdown while the question is open: the answer grants nothing', async (t) => {
    person.answer = async () => {
      await admin.lockdown(true);
      return ACCEPT_DIR;
    };
    t.teardown(() => admin.lockdown(false));
    const r = await fs.call('read_text_file', { path: `${w}/lock/l.txt` });
    t.equal(r.isError, true);
    t.match(r.text, 'lockdown');
    t.notOk(await granted('fs', 'lock'), 'nothing was granted');
    await admin.lockdown(false);
  });

  await t.test('calls queued on one question', async (t) => {
    person.answer = () => Promise.resolve(ACCEPT_DIR);
    const n = asked.length;
    // Sent together: one question covers the two calls in q1 (whichever call's check came back
    // first asks it; the other waits and its answer covers it), another is asked for q2. Which
    // of the three checks comes back first is the daemon's and the machine's to say.
    const results = await Promise.all([
      fs.call('read_text_file', { path: `${w}/q1/a.txt` }),
      fs.call('read_text_file', { path: `${w}/q1/b.txt` }),
      fs.call('read_text_file', { path: `${w}/q2/c.txt` }),
    ]);
    t.same(
      results.map((r) => r.text),
      ['q1/a.txt', 'q1/b.txt', 'q2/c.txt'],
    );
    const questions = asked.slice(n).map((p) => p.message);
    t.equal(questions.length, 2, 'two questions, one after the other');
    const about = (...paths: string[]) =>
      questions.filter((q) => paths.some((p) => String(q).includes(`"${p}"`))).length;
    t.equal(about(`${w}/q1/a.txt`, `${w}/q1/b.txt`), 1, 'one question for q1');
    t.equal(about(`${w}/q2/c.txt`), 1, 'one question for q2');
  });

  await t.test('no answer within the limit: the question is withdrawn', async (t) => {
    const r = await silent.call('read_text_file', { path: `${w}/late/z.txt` });
    t.equal(r.isError, true);
    t.match(r.text, 'outside every root');
    await waitFor(() => closed === 1, 30_000, 'the host was told to close the dialog');
    t.notOk(await granted('silent', 'late'), 'nothing was granted');
  });

  await t.test('dismissed: another file of that directory does not ask again', async (t) => {
    person.answer = () => Promise.resolve({ action: 'cancel' });
    const n = asked.length;
    const r = await fs.call('read_text_file', { path: `${w}/dis/a.txt` });
    t.equal(r.isError, true);
    t.equal(asked.length, n + 1);
    const sibling = await fs.call('read_text_file', { path: `${w}/dis/b.txt` });
    t.equal(sibling.isError, true);
    t.match(
      sibling.text,
      `the person dismissed the question about a grant of ${JSON.stringify(`${w}/dis`)}`,
    );
    t.equal(asked.length, n + 1, 'one dismissal, one question');
  });

  await t.test('a call queued behind a declined question says why it was not asked', async (t) => {
    person.answer = () => Promise.resolve({ action: 'decline' });
    const n = asked.length;
    const [a, b] = await Promise.all([
      fs.call('read_text_file', { path: `${w}/q3/a.txt` }),
      fs.call('read_text_file', { path: `${w}/q3/b.txt` }),
    ]);
    t.equal(asked.length, n + 1, 'one question for q3');
    for (const r of [a, b]) {
      t.equal(r.isError, true);
      t.match(r.text, 'outside every root');
    }
    // Whichever call waited: not asked, and told so (the declined offer, and until when).
    const waited = [a, b].filter((r) => r.text.includes('the person refused a grant of'));
    t.equal(waited.length, 1, `${a.text}\n${b.text}`);
    t.match(waited[0]?.text, `the person refused a grant of ${JSON.stringify(`${w}/q3`)}`);
  });

  await t.test('a tool the server never listed is not asked about', async (t) => {
    person.answer = () => Promise.resolve(ACCEPT_DIR);
    const n = asked.length;
    const r = await fs.call('read_text_file_and_more', { path: `${w}/unl/u.txt` });
    t.equal(r.isError, true);
    t.match(r.text, 'outside every root');
    t.match(r.text, 'not asked: the server lists no tool named "read_text_file_and_more"');
    t.equal(asked.length, n, 'no question');
    t.notOk(await granted('fs', 'unl'), 'nothing was granted');
  });
});
