/**
 * A server whose `{roots}` stand for nothing yet is not started; a host pinned to 2026-07-28
 * (no `initialize`, a `server/discover` probe) still connects to the proxy's stand-in, sees no
 * tools, and is told on its listen stream when the real server starts with its first root.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { Client as V2Client } from '@modelcontextprotocol/client';
import { startDaemon } from '../../helpers/daemon.js';
import { FS2_SERVER, startEraHost } from '../../helpers/era-host.js';
import { ownedShortDir, waitFor } from '../../helpers/proxy.js';

void t.test('a pinned 2026-07-28 host meets the stand-in, then the real server', async (t) => {
  const dir = ownedShortDir(t);
  const later = join(dir, 'w', 'later');
  mkdirSync(later, { recursive: true });
  const d = await startDaemon(t, `version: 1\nservers:\n  none-yet:\n    roots: []\n`, { dir });
  const admin = await d.connect('admin');
  const host = await startEraHost(t, {
    kind: 'v2-pin',
    server: 'none-yet',
    socket: d.socket,
    serverCommand: [process.execPath, FS2_SERVER, '{roots}'],
  });
  t.equal(host.version, '2026-07-28', 'the session is a 2026-07-28 one');
  const v2 = host.client as V2Client;
  t.same((await v2.listTools()).tools, [], 'no tools while the server has no root');
  await v2.listen({ toolsListChanged: true });

  await admin.grant('none-yet', later, { seconds: 600 });
  await waitFor(
    () => host.notices().some((n) => n.method === 'notifications/tools/list_changed'),
    30_000,
    'tools/list_changed on the listen stream',
  );
  const tools = (await v2.listTools()).tools.map((x) => x.name);
  t.ok(tools.includes('list_allowed_directories'), 'the real tools, in the same session');
  const { text, isError } = await host.call('list_allowed_directories');
  t.notOk(isError);
  t.match(text, realpathSync(later), 'the server serves the granted directory');
});
