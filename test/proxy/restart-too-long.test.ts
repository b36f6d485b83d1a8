/**
 * A restart whose command line or environment the system refuses (E2BIG: an agent made hundreds
 * of long-named directories under a glob root given through `--env DIRS={roots}`). Node throws
 * that from `spawn` rather than emitting it; the host must get the reason, not a session that
 * never answers again.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { startProxied } from '../helpers/proxied-server.js';
import { FS_SERVER, ownedShortDir, waitFor } from '../helpers/proxy.js';

void t.test('a restart the system refuses to exec: every call gets the reason', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'alpha'), { recursive: true });
  mkdirSync(join(w, 'g'));
  const d = await startDaemon(
    t,
    `version: 1
servers:
  fs:
    roots:
      - path: ${w}/alpha
      - path: ${w}/g/*
`,
    { dir },
  );
  const fs = await startProxied(t, {
    server: 'fs',
    socket: d.socket,
    proxyArgs: ['--env', 'DIRS={roots}'],
    command: [process.execPath, FS_SERVER, '{roots}'],
  });
  t.equal((await fs.call('list_allowed_directories')).isError, false, 'first start');

  // One environment string may hold 128 KiB: 700 names of 200 characters pass it.
  for (let i = 0; i < 700; i++) mkdirSync(join(w, 'g', `${i}-${'x'.repeat(200)}`));
  await waitFor(
    () => fs.stderr().includes('longer than the system allows'),
    60_000,
    'the refused start in the log',
  );
  await t.rejects(
    fs.call('list_allowed_directories'),
    /could not be started: its command line and environment are longer than the system allows/,
    'the call is answered with why',
  );
});
