import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';

void t.test('a daemon serves a policy', async (t) => {
  const d = await startDaemon(t, undefined);
  mkdirSync(join(d.dir, 'proj'));
  d.writePolicy(`version: 1\nservers:\n  fs:\n    roots: [{path: ${d.dir}/proj}]\n`);
  const c = await d.connect();
  await c.reload();
  const list = await c.listRoots('fs');
  t.equal(list.roots.length, 1);
  t.equal(list.roots[0]!.name, 'proj');
  const status = await c.status();
  t.equal(status.servers[0]!.name, 'fs');
});
