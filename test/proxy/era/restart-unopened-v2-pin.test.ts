/**
 * A restart before the host has opened its session. A host pinned to 2026-07-28 probes with
 * `server/discover` on a process of its own, so the session's proxy hears nothing from it until
 * its first call. **Was a bug, found by a user pass:** a roots change in that time restarted the
 * server, and the proxy opened the new one (and asked the old for its lists) with a
 * `server/discover` that had no envelope, since it had none to copy; server-filesystem 2.0.1, which
 * serves both eras, answered "Method not found" and from then on answered the host's calls without
 * 2026-07-28's `resultType`, which the host's SDK refused, every call, until the next restart.
 * Now a swap before the host opened its session only stops and starts (server-swap.ts).
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../../helpers/daemon.js';
import { FS2_SERVER, startEraHost } from '../../helpers/era-host.js';
import { ownedShortDir, waitFor } from '../../helpers/proxy.js';

void t.test('a roots change before the first call of a pinned 2026-07-28 host', async (t) => {
  const dir = ownedShortDir(t);
  for (const d of ['a', 'b']) mkdirSync(join(dir, 'w', d), { recursive: true });
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  filesystem:\n    roots: [{path: ${dir}/w/a}]\n`,
    { dir },
  );
  const admin = await d.connect('admin');
  const host = await startEraHost(t, {
    kind: 'v2-pin',
    server: 'filesystem',
    socket: d.socket,
    serverCommand: [process.execPath, FS2_SERVER, '{roots}'],
  });
  t.equal(host.version, '2026-07-28');
  await waitFor(() => /running on stdio/.test(host.stderr()), 30_000, 'the server up');
  await admin.grant('filesystem', join(dir, 'w', 'b'), { seconds: 600 });
  await waitFor(() => /restarted the server/.test(host.stderr()), 30_000, 'the restart');
  t.match(host.stderr(), 'restarted the server before the host opened its session');
  t.notMatch(host.stderr(), 'did not answer server/discover', 'no made-up opening');
  for (let i = 0; i < 2; i++) {
    const { text, isError } = await host.call('list_allowed_directories');
    t.notOk(isError, `call ${i + 1} answered`);
    t.match(text, realpathSync(join(dir, 'w', 'b')), 'by the new server, with the new root');
  }
});
