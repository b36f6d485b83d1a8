/**
 * A sandboxed server's watched directory (or file) renamed, in place or deeper, under a name where
 * a deny pattern then matches it or something inside it: the mounts laid at start hid nothing
 * there (the names did not match then), so the proxy's watch must report what now matches and
 * restart the server, after which the same host session gets the kernel's error. Each row renames
 * what the server could rename itself inside its writable root, across the patterns' shapes: a
 * `**\/NAME` deny, a `**\/NAME/*.ext` deny matching inside the renamed directory, one of three
 * segments matching two levels down, and a file renamed to a denied name.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { changeUntilReported, restartsIdle, startBoxed } from '../helpers/boxed-server.js';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

/** [what, the rename (from, to, under the root), the file that must then be unreadable] */
const ROWS: [string, string, string, string][] = [
  ['a directory renamed to a denied name', 'd1', 'vault', 'vault/k.txt'],
  ['a directory renamed where a pattern matches inside it', 'd2', 'secrets', 'secrets/k.json'],
  ['a directory moved deeper under a denied name', 'd3', 'deep/secrets', 'deep/secrets/k.json'],
  [
    'a directory renamed where a three-segment pattern matches',
    'd4',
    'private',
    'private/keys/a.pem',
  ],
  ['a file renamed to a denied name', 'd5/env.txt', 'd5/.env', 'd5/.env'],
];

void t.test('what a rename brings under a deny is hidden after a restart', async (t) => {
  const dir = ownedShortDir(t);
  const r = join(dir, 'w', 'r');
  const plant = (p: string) => {
    mkdirSync(join(p, '..'), { recursive: true });
    writeFileSync(p, 'TOKEN=renamed in');
  };
  plant(join(r, 'd1', 'k.txt'));
  plant(join(r, 'd2', 'k.json'));
  plant(join(r, 'd3', 'k.json'));
  mkdirSync(join(r, 'deep'));
  plant(join(r, 'd4', 'keys', 'a.pem'));
  plant(join(r, 'd5', 'env.txt'));
  writeFileSync(join(r, 'notes.txt'), 'notes');
  const policy = `version: 1
servers:
  h:
    roots:
      - path: ${r}
    deny:
      - "**/vault"
      - "**/secrets/*.json"
      - "**/private/keys/*.pem"
      - "**/.env"
`;
  const d = await startDaemon(t, policy, { dir });
  const boxed = await startBoxed(t, d.socket);
  const read = (ref: string) => boxed.call('attempt', { action: 'read', ref });
  t.match((await read(join(r, 'notes.txt'))).text, /^ok: notes$/, 'the server is up');
  for (const [what, from, to, file] of ROWS) {
    await changeUntilReported(boxed, `${file} after: ${what}`, () =>
      renameSync(join(r, from), join(r, to)),
    );
    await waitFor(() => restartsIdle(boxed), 30_000, `the restart after: ${what}`);
    const inside = await read(join(r, file));
    t.equal(inside.isError, true, `${what}: ${file} is not readable`);
    t.notMatch(inside.text, /TOKEN/, `${what}: nothing of it is shown`);
  }
});
