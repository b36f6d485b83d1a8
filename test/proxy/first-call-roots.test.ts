/**
 * A host's first tool call, made the moment the session begins, reaches a server that has its
 * roots: the filesystem server asks for them on `initialized`, and a call relayed before it has
 * applied the answer found no allowed directory (it listed none, and refused every path). Seen
 * from a fresh clone in 6 of 8 sessions before the proxy held calls for the first fetch.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, real, startProxiedFs } from '../helpers/proxy.js';

const SESSIONS = 4;

void t.test('the first call of a session sees the policy’s roots', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(real(dir), 'w');
  for (const d of ['a', 'b']) mkdirSync(join(w, d), { recursive: true });
  writeFileSync(join(w, 'a/x.txt'), 'x text');
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${w}/a\n      - path: ${w}/b\n`,
    { dir },
  );
  for (let i = 0; i < SESSIONS; i++) {
    // Each session's first call with a path, then a fresh session's first call without one;
    // every other session unchecked (--no-enforce, as a sandbox alone runs it): the server's
    // own roots are what it needs either way.
    const extra = i % 2 === 1 ? ['--no-enforce'] : [];
    const first = await startProxiedFs(t, { server: 'fs', socket: d.socket, extra });
    const read = await first.call('read_text_file', { path: join(w, 'a/x.txt') });
    t.same(
      read,
      { text: 'x text', isError: false },
      `session ${i}${extra.length > 0 ? ' (--no-enforce)' : ''}: the first call reads a root's file`,
    );
    await first.close();
    const listing = await startProxiedFs(t, { server: 'fs', socket: d.socket, extra });
    t.same(
      await listing.allowed(),
      [join(w, 'a'), join(w, 'b')],
      `session ${i}: the first call lists both roots`,
    );
    await listing.close();
  }
});
