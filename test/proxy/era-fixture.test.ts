/**
 * Each SDK host (the v2 client in auto and pinned 2026-07-28 mode, the v1 client) through the proxy
 * to a server built with the v2 SDK: its roots come from the policy whether it asks alone or beside
 * an elicitation, a server asking for ever is stopped, and tools whose paths only their
 * `tools/list` schema reveals are enforced.
 */
import { pathToFileURL } from 'node:url';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOST_KINDS, HOST_ROOT, startEraHost } from '../helpers/era-host.js';
import { eraWorld } from '../helpers/era-policy.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { fixtureServer } from '../helpers/raw-session.js';

const FIXTURE = fixtureServer('v2-roots.mjs');

void t.test('SDK hosts through the proxy to a v2 SDK server that asks for roots', async (t) => {
  const dir = ownedShortDir(t);
  const world = eraWorld(dir, ['v2']);
  const { w, rootUris } = world;
  const d = await startDaemon(t, world.policy, { dir });
  const uri = (p: string) => pathToFileURL(`${w}/${p}`).href;

  for (const kind of HOST_KINDS) {
    await t.test(kind, async (t) => {
      const host = await startEraHost(t, {
        kind,
        server: 'v2',
        socket: d.socket,
        serverCommand: [process.execPath, FIXTURE],
      });
      const modern = kind !== 'v1';
      if (modern) t.equal(host.version, '2026-07-28', 'the session is 2026-07-28');

      const roots = await host.call('roots');
      t.same(
        roots,
        { text: rootUris.join('\n'), isError: false },
        'the server got the policy’s roots',
      );

      const both = await host.call('roots_confirm');
      t.same(
        JSON.parse(both.text),
        { roots: rootUris, confirm: { action: 'accept', content: { ok: true } } },
        'roots from the policy, the elicitation answered by the host',
      );
      t.equal(host.hostRootsCalls(), 0, 'the host was never asked for roots');
      t.notOk(roots.text.split('\n').includes(HOST_ROOT), 'the host’s roots never reached it');

      const forever = await host.call('roots_forever');
      t.equal(forever.isError, true, 'a server asking for roots without end is stopped');
      if (modern) t.match(forever.text, /asked for roots\/list 4 times for one tools\/call/);

      const cases: [string, Record<string, unknown>, boolean][] = [
        ['open', { location: uri('in/a.txt') }, false],
        ['open', { location: uri('ro/r.txt') }, false],
        ['open', { location: uri('out/secret.txt') }, true],
        ['open', { location: 'file:///etc/passwd' }, true],
        ['stamp', { target: uri('in/a.txt') }, false],
        ['stamp', { target: uri('ro/r.txt') }, true],
        ['stamp', { target: uri('out/secret.txt') }, true],
      ];
      for (const [tool, args, refused] of cases) {
        const r = await host.call(tool, args);
        const what = `${tool} ${JSON.stringify(args)}`;
        t.equal(r.isError, refused, `${what}: ${refused ? 'refused' : 'allowed'}`);
        if (refused)
          t.match(r.text, `mcp-roots-proxy refused ${tool}`, `${what}: the reason shown`);
      }
    });
  }
});
