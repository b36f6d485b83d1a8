/**
 * A subscriber that reads its pushes slower than they come (each a large list) gets the newest
 * list once it reads again, and stays connected: a push superseded while the subscriber had yet
 * to read the one before is not queued behind it.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startLargeListDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';
import { rawConnect } from '../helpers/raw.js';

void t.test('a slow subscriber of a large list gets the newest list, not cut off', async (t) => {
  // About 300 KB a list: ten pushes pile up well past the 1 MiB cap on queued output.
  const { dir, d } = await startLargeListDaemon(t);
  const raw = await rawConnect(d.socket);
  t.teardown(() => raw.close());
  raw.send(
    '{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{"server":"fs","subscribe":true}}\n',
  );
  t.equal(((await raw.next()).result as { roots: unknown[] }).roots.length, 3000);
  raw.socket.pause();
  const made: string[] = [];
  for (let i = 0; i < 10; i++) {
    const name = `new-${i}`;
    mkdirSync(join(dir, 'many', name));
    made.push(name);
    // One push each: wait until the daemon lists it before making the next.
    await waitFor(
      () => d.daemon.state.roots('fs').some((r) => r.uri.endsWith(`/${name}`)),
      30_000,
      `${name} listed`,
    );
  }
  t.equal(d.daemon.server.clientCount, 1, 'the slow subscriber is still connected');
  raw.socket.resume();
  let last: { roots: { uri: string }[] } | undefined;
  let pushes = 0;
  while (last === undefined || last.roots.length < 3010) {
    const line = await raw.next();
    t.equal(line.method, 'notifications/roots/list_changed');
    pushes++;
    last = line.params as { roots: { uri: string }[] };
  }
  t.ok(
    made.every((name) => last.roots.some((r) => r.uri.endsWith(`/${name}`))),
    'the last push holds every new folder',
  );
  t.ok(pushes <= 10, `${pushes} pushes read for 10 changes`);
  t.equal(d.daemon.server.clientCount, 1, 'and it is still connected');
});
