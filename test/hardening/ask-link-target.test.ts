/**
 * A question shows, and an accepted answer grants, exactly where the path leads: never a
 * spelling a link decides. An agent asked about `project/docs/readme.md` with `docs` a link to
 * another folder (or re-pointed at `/` while the person reads), or about `link/etc` with the
 * link leading to `/`, got the person to grant the link's target, `/` read-write among them. The daemon's check says
 * the canonical path; the proxy asks about it and grants it with `asked`, which the daemon
 * refuses when a link on the way changed, or for `/`, the home directory and above.
 */
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import t from 'tap';
import { askTargets } from '../../proxy/ask-person.js';
import { askPerson, startAskDaemon } from '../helpers/ask-setup.js';
import { startProxiedFs, waitFor } from '../helpers/proxy.js';

type Params = ElicitRequest['params'];

const FILES: Record<string, string> = {
  'work/project/x.txt': 'x',
  'private/readme.md': 'private text',
  'private2/readme.md': 'private two',
  'home/notes.txt': 'notes',
};

/** The `scope` choices a question offered: what each grants, by its title. */
function offered(q: Params): { const: string; title: string }[] {
  const schema = (
    q as unknown as { requestedSchema: { properties: { scope: { oneOf: unknown[] } } } }
  ).requestedSchema;
  return schema.properties.scope.oneOf as { const: string; title: string }[];
}

void t.test('a question names and grants where a path leads', async (t) => {
  const { w, d, admin } = await startAskDaemon(
    t,
    FILES,
    (w) => `version: 1\nask: true\nservers:\n  fs:\n    roots:\n      - path: ${w}/work\n`,
  );
  symlinkSync(join(w, 'private'), join(w, 'work/project/docs'));
  symlinkSync(join(w, 'private2'), join(w, 'work/project/docs2'));
  const person = askPerson<Params, ElicitResult>(() => ({ action: 'decline' }));
  const { asked } = person;
  const fs = await startProxiedFs(t, { server: 'fs', socket: d.socket, elicit: person.elicit });
  await waitFor(async () => (await fs.allowed()).join() === `${w}/work`, 30_000, 'first list');
  const granted = async () => (await admin.grants()).grants.map((g) => g.path).sort();

  await t.test('through a link: the target is shown and granted, not the link', async (t) => {
    person.answer = () => ({ action: 'accept', content: { duration: '10m', readOnly: true } });
    const r = await fs.call('read_text_file', { path: `${w}/work/project/docs/readme.md` });
    t.same(r, { text: 'private text', isError: false });
    const q = asked.at(-1)!;
    t.match(q.message, `That path leads to ${JSON.stringify(`${w}/private/readme.md`)}`);
    t.same(
      offered(q).map((o) => o.const),
      ['directory', 'path'],
    );
    t.match(offered(q)[0]!.title, JSON.stringify(`${w}/private`), 'the directory it leads to');
    t.notMatch(JSON.stringify(q), '"/work/project/docs"', 'the link is never offered');
    t.same(await granted(), [`${w}/private`], 'what was shown is what was granted');
  });

  await t.test('a link re-pointed at / while the person reads grants nothing wider', async (t) => {
    person.answer = () => {
      // The agent re-points the link before the person answers.
      rmSync(join(w, 'work/project/docs2'));
      symlinkSync('/', join(w, 'work/project/docs2'));
      return { action: 'accept', content: { scope: 'directory', duration: '1h', readOnly: false } };
    };
    const n = asked.length;
    const r = await fs.call('read_text_file', { path: `${w}/work/project/docs2/readme.md` });
    t.equal(asked.length, n + 1, 'asked once, about where the link led then');
    t.match(asked.at(-1)!.message, JSON.stringify(`${w}/private2/readme.md`));
    t.equal(r.isError, true, 'the call, now leading to /readme.md, is refused');
    t.same(await granted(), [`${w}/private`, `${w}/private2`], 'the directory shown, not /');
    const root = await admin.check('fs', '/etc/passwd', 'read');
    t.equal(root.allowed, false, 'nothing outside what was shown is allowed');
  });

  await t.test('a path that leads to / is refused without a question', async (t) => {
    const n = asked.length;
    symlinkSync('/', join(w, 'work/top'));
    const r = await fs.call('list_directory', { path: join(w, 'work/top') });
    t.equal(r.isError, true);
    t.match(r.text, /not asked: allowing it would open \//);
    t.equal(asked.length, n, 'no question');
  });

  await t.test('a path through /proc is refused without a question', async (t) => {
    const n = asked.length;
    const r = await fs.call('list_directory', { path: '/proc/self/root/etc' });
    t.equal(r.isError, true);
    t.match(r.text, 'is under /proc');
    t.equal(asked.length, n, 'no question: /proc/self means another process in the daemon');
  });

  await t.test('a link to /etc is asked about as /etc, and / is never offered', async (t) => {
    person.answer = () => ({ action: 'decline' });
    const n = asked.length;
    symlinkSync('/', join(w, 'work/top2'));
    const r = await fs.call('list_directory', { path: join(w, 'work/top2/etc') });
    t.equal(r.isError, true);
    t.equal(asked.length, n + 1);
    const q = asked.at(-1)!;
    t.match(q.message, 'That path leads to "/etc"');
    t.same(offered(q), [{ const: 'path', title: 'Only "/etc"' }], 'only /etc itself');
    // Declined: another spelling of the same place does not bring the question back.
    symlinkSync('/etc', join(w, 'work/etclink'));
    const again = await fs.call('list_directory', { path: join(w, 'work/etclink') });
    t.equal(again.isError, true);
    t.match(again.text, 'the person refused it and is not asked again');
    t.equal(asked.length, n + 1, 'not asked again');
  });

  await t.test('an answer choosing a scope that was not offered grants nothing', async (t) => {
    person.answer = () => ({
      action: 'accept',
      content: { scope: 'directory', duration: '1h', readOnly: false },
    });
    const before = await granted();
    const n = asked.length;
    const r = await fs.call('list_directory', { path: join(w, 'work/top2/usr') });
    t.equal(r.isError, true);
    t.equal(asked.length, n + 1, 'asked, about /usr alone');
    t.same(await granted(), before);
  });
});

void t.test('the daemon grants an asked path only as shown, and never / or home', async (t) => {
  const { w, admin } = await startAskDaemon(
    t,
    FILES,
    (w) => `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${w}/work\n`,
  );
  symlinkSync(join(w, 'private'), join(w, 'work/link'));
  // The daemon's home (test/helpers/daemon.ts), beside the workspace.
  const home = join(dirname(w), 'home');
  mkdirSync(join(home, 'sub'), { recursive: true });
  writeFileSync(join(home, 'sub/f'), '');
  const asked = (path: string) =>
    admin.request('grants/add', { server: 'fs', path, seconds: 60, asked: true });
  await t.rejects(asked(join(w, 'work/link')), {
    message: /now leads to .*\/private .*nothing was granted/,
  });
  await t.rejects(asked('/'), { message: /too much to grant from a question/ });
  await t.rejects(asked(home), { message: /holds the home directory/ });
  await t.rejects(asked(dirname(home)), { message: /holds the home directory/ });
  t.equal((await admin.grants()).grants.length, 0, 'none of them granted');
  const inside = await asked(join(home, 'sub'));
  t.equal(inside.grant.path, join(home, 'sub'), 'a directory inside the home may be asked for');
  const plain = await admin.grant('fs', join(w, 'work/link'), { seconds: 60 });
  t.equal(plain.grant.path, join(w, 'private'), 'rootsctl grant follows the link, as it says');
});

void t.test('askTargets: the directory first, then the path, neither too wide', (t) => {
  const home = '/home/u';
  // None of these exists here: each is taken as a file, its directory offered first.
  const of = (canonical: string) => askTargets(canonical, home).map((x) => x.path);
  t.same(of('/srv/data/a.txt'), ['/srv/data', '/srv/data/a.txt']);
  t.same(of('/home/u/notes.txt'), ['/home/u/notes.txt'], 'not the home directory');
  t.same(of('/home/u/p/a'), ['/home/u/p', '/home/u/p/a']);
  t.same(
    of('/home/user2/a'),
    ['/home/user2', '/home/user2/a'],
    'a sibling of home is not above it',
  );
  t.same(of('/etc'), ['/etc'], 'not /');
  t.same(of('/home'), [], 'above home');
  t.same(of('/'), []);
  t.end();
});
