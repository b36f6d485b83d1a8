import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { RootsListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import t from 'tap';
import { attachRoots } from '../../index.js';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

void t.test('attachRoots gives an SDK host the policy’s roots', async (t) => {
  const dir = ownedShortDir(t);
  mkdirSync(join(dir, 'a'));
  mkdirSync(join(dir, 'b'));
  const policy = (names: string[]) =>
    `version: 1\nservers:\n  notes:\n    roots:\n${names.map((n) => `      - path: ${dir}/${n}\n`).join('')}`;
  const d = await startDaemon(t, policy(['a']), { dir });

  const client = new Client({ name: 'host', version: '0' });
  const attached = attachRoots(client, { server: 'notes', socket: d.socket });
  t.teardown(() => attached.close());
  const server = new Server({ name: 'srv', version: '0' }, { capabilities: {} });
  let changes = 0;
  server.setNotificationHandler(RootsListChangedNotificationSchema, () => {
    changes++;
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(serverSide), client.connect(clientSide)]);
  t.teardown(() => client.close());

  t.same(
    server.getClientCapabilities()?.roots,
    { listChanged: true },
    'the capability is declared',
  );
  const uri = (n: string) => pathToFileURL(join(dir, n)).href;
  const first = await server.listRoots();
  t.same(
    first.roots.map((r) => r.uri),
    [uri('a')],
    'roots/list is answered from the daemon',
  );
  t.equal(first.roots[0]!._meta?.['mcp-roots/readOnly'], false, 'with the policy’s _meta');
  t.same(
    attached.roots?.map((r) => r.uri),
    [uri('a')],
  );

  d.writePolicy(policy(['a', 'b']));
  await (await d.connect()).reload();
  await waitFor(() => changes > 0, 30_000, 'roots/list_changed');
  t.same(
    (await server.listRoots()).roots.map((r) => r.uri),
    [uri('a'), uri('b')],
    'a change is announced and the new list served',
  );

  await d.close();
  await waitFor(() => changes > 1, 30_000, 'list_changed on losing the daemon');
  t.equal(attached.roots, undefined, 'fails closed while the daemon is away');
  await attached.close();
  t.equal(await attached.close(), undefined, 'close() twice is fine');
});
