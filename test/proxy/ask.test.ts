/**
 * Asking the person: an SDK host that declares elicitation, through the built proxy, to the real
 * filesystem server. Accepted answers become grants and the same call succeeds; refusals stick.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import t from 'tap';
import { bin } from '../helpers/bin.js';
import { rootsctl } from '../helpers/cli.js';
import { askPerson, startAskDaemon } from '../helpers/ask-setup.js';
import { startProxiedFs, waitFor } from '../helpers/proxy.js';

type Params = ElicitRequest['params'];

const FILES: Record<string, string> = {
  'home/h.txt': 'home',
  'out1/a.txt': 'a text',
  'out2/b.txt': 'b text',
  'out3/c.txt': 'c text',
  'out3/c2.txt': 'c2 text',
  'out3/sub/x.txt': 'x text',
  'out4/d.txt': 'd text',
  'out5/f.txt': 'f text',
  'out6/keep.txt': 'keep',
  'out7/g.txt': 'g text',
  'out8/h.txt': 'h text',
  'top.txt': 'top text',
  "o u't/e.txt": 'e text',
  'home/private/p.txt': 'private',
  'secret/s.txt': 'secret',
};

void t.test('asking the person through the host', async (t) => {
  const { w, d, admin } = await startAskDaemon(
    t,
    FILES,
    (w) => `version: 1
ask: true
deny:
  - ${w}/secret
servers:
  "*":
    roots:
      - path: ${w}/home
    deny:
      - ${w}/home/private
`,
  );
  const person = askPerson<Params, ElicitResult>(() => ({ action: 'decline' }));
  const { asked } = person;
  const fs = await startProxiedFs(t, { server: 'fs', socket: d.socket, elicit: person.elicit });
  let silentAsks = 0;
  const silent = await startProxiedFs(t, {
    server: 'silent',
    socket: d.socket,
    extra: ['--ask-timeout', '1'],
    elicit: () => {
      silentAsks++;
      return new Promise<ElicitResult>(() => undefined);
    },
  });
  const plain = await startProxiedFs(t, { server: 'plain', socket: d.socket });
  for (const p of [fs, silent, plain]) {
    await waitFor(async () => (await p.allowed()).join() === `${w}/home`, 30_000, 'first list');
  }

  await t.test('accepted for a directory, 10 minutes: the same call succeeds', async (t) => {
    person.answer = () =>
      Promise.resolve({
        action: 'accept',
        content: { scope: 'directory', duration: '10m', readOnly: false },
      });
    const before = Date.now();
    const r = await fs.call('read_text_file', { path: `${w}/out1/a.txt` });
    t.same(r, { text: 'a text', isError: false });
    t.equal(asked.length, 1, 'asked once');
    const q = asked[0]!;
    t.match(q.message, JSON.stringify(`${w}/out1/a.txt`), 'the exact path, escaped');
    t.match(q.message, '"fs"', 'the server');
    t.match(q.message, '"read_text_file"', 'the tool');
    t.match(q.message, 'read', 'read or write');
    const grants = await admin.grants();
    const g = grants.grants.find((x) => x.path === `${w}/out1`);
    t.ok(g, 'the directory is granted');
    const expires = Date.parse(g!.expires);
    t.ok(expires >= before + 590_000 && expires <= Date.now() + 610_000, 'for 10 minutes');
    t.equal(g!.readOnly, false);
    const cli = await rootsctl(['grants', '--socket', d.socket], { env: { HOME: d.dir } });
    t.match(
      cli.out,
      /fs\s+~\/w\/out1\s+read-write\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+(10|9)m/,
      'rootsctl grants shows it and when it expires',
    );
    const again = await fs.call('read_text_file', { path: `${w}/out1/a.txt` });
    t.same(again, { text: 'a text', isError: false });
    t.equal(asked.length, 1, 'not asked again while the grant lasts');
  });

  await t.test('accepted read-only: reads pass, writes are refused without asking', async (t) => {
    person.answer = () =>
      Promise.resolve({
        action: 'accept',
        // The filesystem server takes only directories as roots: a file's grant would not reach it.
        content: { scope: 'directory', duration: '1h', readOnly: true },
      });
    const n = asked.length;
    const r = await fs.call('read_text_file', { path: `${w}/out2/b.txt` });
    t.same(r, { text: 'b text', isError: false });
    t.equal(asked.length, n + 1);
    const g = (await admin.grants()).grants.find((x) => x.path === `${w}/out2`);
    t.equal(g?.readOnly, true, 'a read-only grant');
    const write = await fs.call('write_file', { path: `${w}/out2/b.txt`, content: 'x' });
    t.equal(write.isError, true);
    t.match(write.text, 'read-only');
    t.equal(asked.length, n + 1, 'writing in a read-only root is not asked about by ask: true');
    t.equal(readFileSync(`${w}/out2/b.txt`, 'utf8'), 'b text');
  });

  await t.test('accepted with no fields: what the question showed, read-only', async (t) => {
    // A host may send back only the fields the person touched; the box showed "Read-only" ticked.
    person.answer = () => Promise.resolve({ action: 'accept', content: {} });
    const r = await fs.call('read_text_file', { path: `${w}/out5/f.txt` });
    t.same(r, { text: 'f text', isError: false });
    const g = (await admin.grants()).grants.find((x) => x.path === `${w}/out5`);
    t.equal(g?.readOnly, true, 'a read-only grant, not a read-write one');
    const write = await fs.call('write_file', { path: `${w}/out5/f.txt`, content: 'x' });
    t.equal(write.isError, true, 'so a write is refused');
    t.equal(readFileSync(`${w}/out5/f.txt`, 'utf8'), 'f text');
  });

  await t.test('a new file: only what exists is offered', async (t) => {
    person.answer = () =>
      Promise.resolve({
        action: 'accept',
        content: { scope: 'directory', duration: '10m', readOnly: false },
      });
    const n = asked.length;
    const w1 = await fs.call('write_file', { path: `${w}/out6/new.txt`, content: 'new' });
    t.equal(w1.isError, false, w1.text);
    t.equal(asked.length, n + 1);
    const q = asked[n] as unknown as { requestedSchema: { properties: Record<string, unknown> } };
    const scope = q.requestedSchema.properties.scope as { oneOf: { const: string }[] };
    t.same(
      scope.oneOf.map((o) => o.const),
      ['directory'],
      'the directory alone: the file does not exist yet, and a grant needs a path that does',
    );
    t.equal(readFileSync(`${w}/out6/new.txt`, 'utf8'), 'new');
    const w2 = await fs.call('write_file', { path: `${w}/nodir/sub/new.txt`, content: 'x' });
    t.equal(w2.isError, true);
    t.match(w2.text, 'not asked: neither it nor its directory exists');
    t.equal(asked.length, n + 1, 'nothing to offer, so no question');
  });

  await t.test('declined: refused, and not asked again at once', async (t) => {
    person.answer = () => Promise.resolve({ action: 'decline' });
    const n = asked.length;
    const r = await fs.call('read_text_file', { path: `${w}/out3/c.txt` });
    t.equal(r.isError, true);
    t.match(r.text, 'outside every root');
    t.equal(asked.length, n + 1);
    const again = await fs.call('read_text_file', { path: `${w}/out3/c.txt` });
    t.equal(again.isError, true);
    t.match(again.text, 'not asked again before');
    t.equal(asked.length, n + 1, 'the person is not asked twice');
    // Another file of the same directory would offer the grant the person just refused.
    const sibling = await fs.call('read_text_file', { path: `${w}/out3/c2.txt` });
    t.equal(sibling.isError, true);
    t.match(sibling.text, `the person refused a grant of ${JSON.stringify(`${w}/out3`)}`);
    t.equal(asked.length, n + 1, 'nor asked about another file of that directory');
    // A directory inside it is a grant of its own, offered first: that is asked. Accepted here,
    // it also starts the count of questions the person did not take afresh.
    person.answer = () =>
      Promise.resolve({
        action: 'accept',
        content: { scope: 'directory', duration: '10m', readOnly: true },
      });
    const sub = await fs.call('list_directory', { path: `${w}/out3/sub` });
    t.equal(sub.isError, false, sub.text);
    t.equal(asked.length, n + 2, 'a directory of its own is asked about');
    person.answer = () => Promise.resolve({ action: 'decline' });
    // A question about the directory out4 offers the workspace second: declining it refuses
    // out4, not the workspace, which a file there offers first.
    await fs.call('list_directory', { path: `${w}/out4` });
    t.equal(asked.length, n + 3);
    const top = await fs.call('read_text_file', { path: `${w}/top.txt` });
    t.equal(top.isError, true);
    t.equal(asked.length, n + 4, 'a choice the person was not shown first is asked about');
    // A third question not taken in a row: the session asks nothing more for a while, whatever
    // directory the agent names next.
    const third = await fs.call('read_text_file', { path: `${w}/out7/g.txt` });
    t.equal(asked.length, n + 5);
    // Its own refusal says it was declined: it was asked.
    t.match(third.text, /the person refused .* and is not asked again before/);
    t.notMatch(third.text, 'not asked: the last 3 questions');
    const next = await fs.call('read_text_file', { path: `${w}/out8/h.txt` });
    t.equal(next.isError, true);
    t.match(
      next.text,
      'not asked: the last 3 questions to the person went unanswered, dismissed or declined, so this session asks nothing more before',
    );
    t.match(next.text, new RegExp(`to allow it, run: .* grant fs ${escapeRegExp(`${w}/out8`)} `));
    t.equal(asked.length, n + 5, 'not asked');
  });

  await t.test('denied paths are never asked about', async (t) => {
    person.answer = () =>
      Promise.resolve({
        action: 'accept',
        content: { scope: 'directory', duration: '10m', readOnly: false },
      });
    const n = asked.length;
    for (const path of [`${w}/secret/s.txt`, `${w}/home/private/p.txt`]) {
      const r = await fs.call('read_text_file', { path });
      t.equal(r.isError, true, path);
      t.match(r.text, 'denied', path);
    }
    t.equal(asked.length, n, 'never asked');
  });

  await t.test('no answer within the limit: refused', async (t) => {
    const r = await silent.call('read_text_file', { path: `${w}/out4/d.txt` });
    t.equal(r.isError, true);
    t.match(r.text, 'outside every root');
    t.equal(silentAsks, 1);
    t.notOk(
      (await admin.grants()).grants.some((g) => g.server === 'silent'),
      'nothing was granted',
    );
    // Unanswered is not refused: the next call says so, and does not ask again at once.
    const again = await silent.call('read_text_file', { path: `${w}/out4/d.txt` });
    t.match(again.text, 'the person did not answer the question about it and is not asked again');
    t.notMatch(again.text, 'refused it');
    t.equal(silentAsks, 1);
  });

  await t.test('a host without elicitation gets the grant command', async (t) => {
    const r = await plain.call('read_text_file', { path: `${w}/o u't/e.txt` });
    t.equal(r.isError, true);
    // rootsctl as the person can run it (from a clone: node and the built file) and the proxy's
    // --socket, so that the command works as pasted.
    const ctl = `(rootsctl|node ${escapeRegExp(bin('rootsctl'))}) --socket ${escapeRegExp(d.socket)}`;
    t.match(r.text, new RegExp(`to allow it, run: ${ctl} grant plain `));
    // Its directory: the filesystem server takes no single file as a root.
    t.match(r.text, ` grant plain '${w}/o u'\\''t' --for 1h --read-only`);
  });

  await t.test('every ask and its answer is in the decision log', async (t) => {
    const file = join(d.stateDir, 'decisions.jsonl');
    const asks = (): { answer: string; server: string; granted?: unknown }[] =>
      readFileSync(file, 'utf8')
        .split('\n')
        .filter((l) => l.includes('"kind":"ask"'))
        .map((l) => JSON.parse(l) as { answer: string; server: string });
    await waitFor(() => asks().length >= 10, 30_000, 'ten asks logged');
    const answers = asks().map((a) => `${a.server} ${a.answer}`);
    t.same(answers.sort(), [
      'fs accept',
      'fs accept',
      'fs accept',
      'fs accept',
      'fs accept',
      'fs decline',
      'fs decline',
      'fs decline',
      'fs decline',
      'silent timeout',
    ]);
    t.ok(
      asks()
        .filter((a) => a.answer === 'accept')
        .every((a) => a.granted !== undefined),
    );
    // The call's own check is its one refusal: the proxy's look before asking is not logged.
    const checks = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"kind":"check"') && l.includes(`${w}/out1/a.txt`))
      .map((l) => (JSON.parse(l) as { allowed: boolean }).allowed);
    t.equal(checks[0], false, 'refused first');
    t.equal(
      checks.filter((allowed) => !allowed).length,
      1,
      'once: the look before asking is not logged',
    );
    t.equal(checks.at(-1), true, 'then allowed');
    // A call whose question was declined: one refusal (the check after the answer is not logged
    // again), and the answer; the two calls after it, each refused once.
    const declined = readFileSync(file, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"kind":"check"') && l.includes(`${w}/out3/c.txt`))
      .map((l) => (JSON.parse(l) as { allowed: boolean }).allowed);
    t.same(declined, [false, false], 'the declined call and the one after it: once each');
  });
});

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
