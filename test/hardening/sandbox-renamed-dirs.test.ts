/**
 * A watched directory of a sandboxed server's root removed or moved away, with another made or
 * moved under its name at once, then a denied file made in it: the proxy's watch must see the new
 * directory (its name was held by the old directory's watch, which follows the inode, and the new
 * one was never watched) and restart the server, so that the same host session gets the kernel's
 * error for the file. Without the restart the file is readable: sandbox-new-denied.test.ts shows
 * that the mounts laid at start do not hide what comes later.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { changeUntilReported, restartsIdle, startBoxed } from '../helpers/boxed-server.js';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

void t.test(
  'a directory made again under a watched name is watched for denied paths',
  async (t) => {
    const dir = ownedShortDir(t);
    const w = join(dir, 'w');
    const r = join(w, 'r');
    mkdirSync(join(w, 'outside'), { recursive: true });
    for (const d of ['P1/in', 'P2/in', 'P3/in', 'Q3/q']) mkdirSync(join(r, d), { recursive: true });
    writeFileSync(join(r, 'notes.txt'), 'notes');
    const policy = `version: 1
servers:
  h:
    roots:
      - path: ${r}
    deny:
      - "**/.env"
`;
    const d = await startDaemon(t, policy, { dir });
    const boxed = await startBoxed(t, d.socket);
    const read = (ref: string) => boxed.call('attempt', { action: 'read', ref });
    t.match((await read(join(r, 'notes.txt'))).text, /^ok: notes$/, 'the server is up');

    // [what, replace the directory, where the denied file is then made]
    const cases: [string, () => void, string][] = [
      [
        'rm -r P; mkdir P',
        () => {
          rmSync(join(r, 'P1'), { recursive: true });
          mkdirSync(join(r, 'P1'));
        },
        join(r, 'P1', '.env'),
      ],
      [
        'mv P out; mkdir P',
        () => {
          renameSync(join(r, 'P2'), join(w, 'outside', 'P2'));
          mkdirSync(join(r, 'P2'));
        },
        join(r, 'P2', '.env'),
      ],
      [
        'rm -r P; mv Q P',
        () => {
          rmSync(join(r, 'P3'), { recursive: true });
          renameSync(join(r, 'Q3'), join(r, 'P3'));
        },
        join(r, 'P3', 'q', '.env'),
      ],
    ];
    for (const [what, replace, file] of cases) {
      await changeUntilReported(boxed, `${file} after ${what}`, () => {
        replace();
        writeFileSync(file, 'TOKEN=made later');
      });
      const inside = await read(file);
      t.equal(inside.isError, true, `${what}: the file is not readable`);
      t.match(inside.text, /^EACCES: /, `${what}: the kernel's error`);
    }
    await waitFor(() => restartsIdle(boxed), 30_000, 'the last restart ended');
  },
);
