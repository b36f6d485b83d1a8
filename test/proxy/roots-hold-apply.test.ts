/**
 * A call made just after the server fetched a new list (a root granted a moment before) waits
 * until the server has most likely applied it: its loop has gone round (pings answered) and the
 * roots have been checked as it checks them. A fixed 50 ms was not enough for the filesystem
 * server on a loaded machine, which then refused a path in the root just granted.
 */
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { startProxied } from '../helpers/proxied-server.js';
import { ownedShortDir, real, waitFor } from '../helpers/proxy.js';
import { fixtureServer } from '../helpers/repo.js';

/** The server answers a ping this late and applies a list this long after fetching it. */
const PING_MS = 300;
const APPLY_MS = 200;

void t.test(
  'a call just after the server fetched its new list waits until it is applied',
  async (t) => {
    const dir = ownedShortDir(t);
    const w = join(real(dir), 'w');
    for (const d of ['a', 'b']) mkdirSync(join(w, d), { recursive: true });
    const log = join(dir, 'server.log');
    writeFileSync(log, '');
    const fetched = () => readFileSync(log, 'utf8').split('\n').length - 1;
    const d = await startDaemon(
      t,
      `version: 1\nservers:\n  slow:\n    roots:\n      - path: ${w}/a\n`,
      {
        dir,
      },
    );
    const h = await startProxied(t, {
      server: 'slow',
      socket: d.socket,
      command: [
        process.execPath,
        fixtureServer('slow-apply.mjs'),
        String(PING_MS),
        String(APPLY_MS),
        log,
      ],
    });
    t.same(
      await h.call('read', { path: `${w}/a/x` }),
      { text: 'ok', isError: false },
      'the first call: the first list applied',
    );
    const admin = await d.connect('admin');
    for (const root of ['b', 'c']) {
      mkdirSync(join(w, root), { recursive: true });
      const before = fetched();
      await admin.grant('slow', `${w}/${root}`);
      // Called the moment the server has its new list, long before it has applied it.
      await waitFor(() => fetched() > before, 30_000, `the server fetching the list with ${root}`);
      t.same(
        await h.call('read', { path: `${w}/${root}/x` }),
        { text: 'ok', isError: false },
        `the call in the root just granted (${root})`,
      );
    }
  },
);
