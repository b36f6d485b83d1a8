/**
 * A denied path that appears inside a sandboxed server's root after it started (created, created
 * deep in new folders, renamed into a denied name, moved in inside a whole directory, a denied
 * directory created, an existing hidden file replaced the way editors save) restarts the server
 * with the new mounts: the same host session then gets the kernel's error for it. Beside it, the
 * same server with the proxy's watch turned off (`MCP_ROOTS_PROXY_WATCH_DIRS=0`) reads each one,
 * so no case passes vacuously: the mounts laid at start do not hide what came later. A path denied
 * only for writing (a new one, or a read-only one replaced) is read-only after its restart.
 */
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import {
  changeUntilReported,
  count,
  DENIED_APPEARED,
  restartsIdle,
  startBoxed,
} from '../helpers/boxed-server.js';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, startProxied, type Proxied } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

void t.test('a denied path created after start is hidden by a restart', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  const r = join(w, 'r');
  mkdirSync(join(w, 'outside', 'pkg'), { recursive: true });
  mkdirSync(join(r, 'sub-a'), { recursive: true });
  mkdirSync(join(r, 'sub-c'), { recursive: true });
  writeFileSync(join(r, 'notes.txt'), 'notes');
  writeFileSync(join(r, '.env'), 'TOKEN=at start');
  writeFileSync(join(r, 'locked.txt'), 'read-only at start');
  const policy = `version: 1
servers:
  h:
    roots:
      - path: ${r}
    deny:
      - "**/.env"
      - ${r}/secrets
      - {path: "**/locked*.txt", access: write}
`;
  const d = await startDaemon(t, policy, { dir });
  const [boxed, blind] = await Promise.all([
    startBoxed(t, d.socket),
    startBoxed(t, d.socket, { MCP_ROOTS_PROXY_WATCH_DIRS: '0' }),
  ]);
  const read = (h: Proxied, ref: string) => h.call('attempt', { action: 'read', ref });
  t.match((await read(boxed, join(r, '.env'))).text, /^EACCES: /, 'hidden at start');
  t.match(blind.stderr(), /cannot watch .* for denied paths/, 'the unwatched proxy says so');

  // [what, make it appear, the denied file to read, the kernel's error once restarted]
  const cases: [string, () => void, string, string][] = [
    [
      'a new file',
      () => writeFileSync(join(r, 'sub-a', '.env'), 'A'),
      join(r, 'sub-a', '.env'),
      'EACCES',
    ],
    [
      'a file deep in new folders',
      () => {
        mkdirSync(join(r, 'b1', 'b2', 'b3'), { recursive: true });
        writeFileSync(join(r, 'b1', 'b2', 'b3', '.env'), 'B');
      },
      join(r, 'b1', 'b2', 'b3', '.env'),
      'EACCES',
    ],
    [
      'a file renamed into a denied name',
      () => {
        writeFileSync(join(r, 'c.txt'), 'C');
        renameSync(join(r, 'c.txt'), join(r, 'sub-c', '.env'));
      },
      join(r, 'sub-c', '.env'),
      'EACCES',
    ],
    [
      'a directory moved in whole',
      () => {
        writeFileSync(join(w, 'outside', 'pkg', '.env'), 'D');
        renameSync(join(w, 'outside', 'pkg'), join(r, 'pkg'));
      },
      join(r, 'pkg', '.env'),
      'EACCES',
    ],
    [
      'a denied directory created',
      () => {
        mkdirSync(join(r, 'secrets'));
        writeFileSync(join(r, 'secrets', 'key.txt'), 'E');
      },
      join(r, 'secrets', 'key.txt'),
      'ENOENT',
    ],
    [
      'a hidden file replaced as editors save it',
      () => {
        writeFileSync(join(r, '.env.tmp'), 'F');
        renameSync(join(r, '.env.tmp'), join(r, '.env'));
      },
      join(r, '.env'),
      'EACCES',
    ],
  ];
  for (const [what, make, file, code] of cases) {
    // The proxy reports the path, and has begun the restart in the same turn: the call below
    // waits for the new server. It is reported once (test/proxy/deny-watch-once.test.ts): a
    // second report would restart again and cut this read off with an error.
    const before = await changeUntilReported(boxed, what, make);
    const inside = await read(boxed, file);
    t.equal(inside.isError, true, `restarted: ${what} is not readable`);
    t.match(inside.text, new RegExp(`^${code}: `), `restarted: ${what} gets ${code}`);
    const open = await read(blind, file);
    t.same(open.isError, false, `not restarted: ${what} is readable (${open.text})`);
    await waitFor(() => restartsIdle(boxed), 30_000, `the restart for ${what} ended`);
    t.equal(count(boxed, DENIED_APPEARED), before + 1, `${what}: one report`);
  }
  // Denied for writing: read-only from the restart on (after the calls in flight, as usual).
  const writes: [string, () => void, string][] = [
    ['a new file', () => writeFileSync(join(r, 'sub-a', 'locked-new.txt'), 'G'), 'locked-new.txt'],
    [
      'a read-only file replaced as editors save it',
      () => {
        writeFileSync(join(r, 'sub-a', 'tmp'), 'H');
        renameSync(join(r, 'sub-a', 'tmp'), join(r, 'locked.txt'));
      },
      'locked.txt',
    ],
  ];
  for (const [what, make, name] of writes) {
    const file = name === 'locked.txt' ? join(r, name) : join(r, 'sub-a', name);
    await waitFor(() => restartsIdle(boxed), 30_000, `no restart under way before: ${what}`);
    const before = count(boxed, 'restarting the server:');
    make();
    await waitFor(
      () => count(boxed, 'restarting the server:') > before,
      30_000,
      `restart: ${what}`,
    );
    const inside = await boxed.call('attempt', { action: 'write', ref: file });
    t.match(inside.text, /^EROFS: /, `restarted: ${what} is read-only`);
    const open = await blind.call('attempt', { action: 'write', ref: file });
    t.same(open, { text: 'ok: written', isError: false }, `not restarted: ${what} is writable`);
  }
  t.match(boxed.stderr(), /restarting the server: a path denied for writing appeared in its roots/);

  await waitFor(() => restartsIdle(boxed), 30_000, 'the last restart ended');
  t.match(boxed.stderr(), /restarting the server: a denied path appeared in its roots \(/);
  t.equal(count(blind, 'restarting the server:'), 0, 'the unwatched server never restarted');
  t.match((await read(boxed, join(r, 'notes.txt'))).text, /^ok: notes$/, 'the rest is readable');
});

void t.test('a server outside the sandbox does not restart for a denied path', async (t) => {
  const dir = ownedShortDir(t);
  const r = join(dir, 'w', 'r');
  mkdirSync(r, { recursive: true });
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  h:\n    roots:\n      - path: ${r}\n    deny:\n      - "**/.env"\n`,
    { dir },
  );
  const h = await startProxied(t, {
    server: 'h',
    socket: d.socket,
    command: [process.execPath, HOSTILE_SERVER],
  });
  writeFileSync(join(r, '.env'), 'TOKEN');
  // Without a sandbox nothing is mounted, so nothing is watched: the tool-call check refuses it.
  const refused = await h.call('attempt', { action: 'read', ref: join(r, '.env') });
  t.equal(refused.isError, true);
  t.match(refused.text, /denied/);
  t.notMatch(h.stderr(), /denied path appeared|restarting the server:/, 'no restart');
});
