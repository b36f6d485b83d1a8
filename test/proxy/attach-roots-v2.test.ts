/** attachRoots on a v2 SDK client: a 2026-07-28 server's roots/list input requests get the daemon's list. */
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import t from 'tap';
import { attachRoots } from '../../index.js';
import { startDaemon } from '../helpers/daemon.js';
import { eraWorld } from '../helpers/era-policy.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { fixtureServer } from '../helpers/repo.js';

for (const mode of ['legacy', 'pinned'] as const) {
  void t.test(`attachRoots gives a v2 client’s server the policy’s roots (${mode})`, async (t) => {
    const dir = ownedShortDir(t);
    const world = eraWorld(dir, ['v2']);
    const d = await startDaemon(t, world.policy, { dir });
    const client = new Client(
      { name: 'host', version: '0' },
      {
        versionNegotiation: { mode: mode === 'legacy' ? 'legacy' : { pin: '2026-07-28' } },
      },
    );
    const attached = attachRoots(client, { server: 'v2', socket: d.socket });
    t.teardown(() => attached.close());
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [fixtureServer('v2-roots.mjs')],
    });
    await client.connect(transport, { timeout: 120_000 });
    t.teardown(() => client.close());
    t.equal(client.getNegotiatedProtocolVersion(), mode === 'legacy' ? '2025-11-25' : '2026-07-28');
    const result = await client.callTool({ name: 'roots', arguments: {} }, { timeout: 120_000 });
    const text = (result.content as { type: string; text: string }[])[0]!.text;
    t.same(text.split('\n'), world.rootUris, 'the server got the daemon’s roots');
    t.same(
      attached.roots?.map((r) => r.uri),
      [pathToFileURL(`${world.w}/in`).href, pathToFileURL(`${world.w}/ro`).href],
    );
  });
}
