/**
 * A sandboxed server's mounts are fixed when it starts, so a policy change that alters only its
 * mounts (its command line stays the same) must restart it: a deny added inside a root, a root
 * turning read-only, and back. After each change the new server gets the kernel's error (or, once
 * the change is undone, the file again), under `--no-enforce` so that only the sandbox answers.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, startProxied, type Proxied } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

/** The policy: one root `w/r` with extra lines under the root and under the server. */
const policy = (w: string, rootExtra: string, serverExtra: string): string =>
  `version: 1\nservers:\n  h:\n    roots:\n      - path: ${w}/r\n${rootExtra}${serverExtra}`;

/** Wait for the `n`th restart (counted in the proxy's log), then for its server's first answer. */
async function restarted(h: Proxied, n: number, what: string): Promise<void> {
  await waitFor(
    () => h.stderr().split('restarting the server:').length - 1 >= n,
    30_000,
    `restart ${n}: ${what}`,
  );
  await h.call('launch');
}

void t.test('a change of mounts alone restarts a sandboxed server', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'r', 'private'), { recursive: true });
  writeFileSync(join(w, 'r', 'notes.txt'), 'notes');
  writeFileSync(join(w, 'r', 'private', 'key.txt'), 'key');
  const d = await startDaemon(t, policy(w, '', ''), { dir });
  const h = await startProxied(t, {
    server: 'h',
    socket: d.socket,
    proxyArgs: ['--sandbox', '--no-enforce'],
    // No placeholder: the command line never changes, only the mounts do.
    command: [process.execPath, HOSTILE_SERVER],
  });
  const attempt = (action: string, ref: string) => h.call('attempt', { action, ref });

  t.same(await attempt('read', `${w}/r/notes.txt`), { text: 'ok: notes', isError: false });
  t.same(await attempt('read', `${w}/r/private/key.txt`), { text: 'ok: key', isError: false });
  const firstLaunch = (await h.call('launch')).text;

  // [what, root lines, server lines, attempts and the kernel's answer in the new server]
  const steps: [string, string, string, [string, string, RegExp][]][] = [
    [
      'a deny on a file inside the root',
      '',
      `    deny:\n      - ${w}/r/notes.txt\n`,
      [
        ['read', `${w}/r/notes.txt`, /^EACCES: /],
        ['read', `${w}/r/private/key.txt`, /^ok: key$/],
      ],
    ],
    [
      'a deny on a directory inside the root',
      '',
      `    deny:\n      - ${w}/r/private\n`,
      [
        ['read', `${w}/r/private/key.txt`, /^ENOENT: /],
        ['write', `${w}/r/private/new.txt`, /^EROFS: /],
        ['read', `${w}/r/notes.txt`, /^ok: notes$/],
      ],
    ],
    [
      'the root turning read-only',
      '        readOnly: true\n',
      '',
      [
        ['write', `${w}/r/notes.txt`, /^EROFS: /],
        ['read', `${w}/r/private/key.txt`, /^ok: key$/],
      ],
    ],
    [
      'the root writable again',
      '',
      '',
      [
        ['write', `${w}/r/new.txt`, /^ok: written$/],
        ['read', `${w}/r/notes.txt`, /^ok: /],
      ],
    ],
  ];
  for (const [i, [what, rootExtra, serverExtra, attempts]] of steps.entries()) {
    d.writePolicy(policy(w, rootExtra, serverExtra));
    await restarted(h, i + 1, what);
    t.match(
      h.stderr(),
      /restarting the server: what it is started with changed \(its roots’ read-only flags or denies\): its sandbox \(/,
    );
    for (const [action, ref, answer] of attempts) {
      t.match((await attempt(action, ref)).text, answer, `${what}: ${action} ${ref}`);
    }
  }
  t.equal(
    JSON.parse((await h.call('launch')).text).argv.join(' '),
    JSON.parse(firstLaunch).argv.join(' '),
    'the command line never changed',
  );
});
