import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, startProxiedFs, waitFor } from '../helpers/proxy.js';

void t.test('the daemon stopped, then restarted', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'alpha'), { recursive: true });
  mkdirSync(join(w, 'beta'));
  writeFileSync(join(w, 'alpha/a.txt'), 'alpha');
  const policy = (roots: string[]) =>
    `version: 1\nservers:\n  fs:\n    roots:\n${roots.map((r) => `      - path: ${w}/${r}\n`).join('')}`;
  const d1 = await startDaemon(t, policy(['alpha']), { dir });

  const fs = await startProxiedFs(t, { server: 'fs', socket: d1.socket });
  await waitFor(async () => (await fs.allowed()).join() === `${w}/alpha`, 30_000, 'first list');

  await d1.close();
  // The proxy tells the server its roots changed; the server's roots/list waits 3 s, then gets [].
  await waitFor(
    () => fs.stderr().includes('answered the server’s roots/list with an empty list'),
    6000,
    'an empty answer',
  );
  t.pass('roots/list answered with an empty list');
  t.equal(fs.hostRootsCalls(), 0, 'nothing was relayed to the host');
  const refused = await fs.call('read_text_file', { path: `${w}/alpha/a.txt` });
  t.equal(refused.isError, true, 'a call with a path is refused while the policy is unknown');
  t.match(refused.text, /^mcp-roots-proxy refused .*not reachable/);
  const noPath = await fs.call('list_allowed_directories', {});
  t.equal(noPath.isError, false, 'a call without a path still works');

  // While it is down the policy changes, so the restarted daemon's list is visibly new.
  d1.writePolicy(policy(['alpha', 'beta']));
  await startDaemon(t, undefined, { dir });
  const ms = await waitFor(
    async () => (await fs.allowed()).join() === [`${w}/alpha`, `${w}/beta`].join(),
    8000,
    'the list after the restart',
  );
  t.pass(`the server was told and fetched the new list (${ms} ms)`);
  t.same(await fs.call('read_text_file', { path: `${w}/alpha/a.txt` }), {
    text: 'alpha',
    isError: false,
  });
  t.equal(fs.hostRootsCalls(), 0);
});
