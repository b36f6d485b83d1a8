/**
 * The sandbox shows a server its own program read-only: its package, and every `node_modules` in
 * a directory above it that Node may resolve from. When the program lies inside one of the
 * server's writable roots (a server being developed in the project it works on), those
 * directories are the server's to make: a `node_modules` that is a link to a directory outside
 * every root was bound, at the next restart, as part of the program, and the server read what
 * lies there; so was the interpreter a script's first line names (`#!/home/me`) even when node
 * runs the script, which ignores that line. Each row makes such a link (the server does it with its
 * own system calls) or line, makes a `.env` to be restarted, then reads at the target's own path. (A link to a path the sandbox does not
 * show, such as `outside` itself, kept bubblewrap from starting the server: nothing leaked.)
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { serverForcesRestart } from '../helpers/boxed-server.js';
import { startDaemon } from '../helpers/daemon.js';
import { startProxied } from '../helpers/proxied-server.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { fixtureServer } from '../helpers/repo.js';

void t.test('a link the server makes is never shown as its program', async (t) => {
  const dir = ownedShortDir(t);
  const r = join(dir, 'w', 'r');
  const srv = join(r, 'dev', 'srv');
  mkdirSync(srv, { recursive: true });
  for (const f of ['hostile.mjs', 'parent-watch.mjs']) copyFileSync(fixtureServer(f), join(srv, f));
  writeFileSync(join(srv, 'package.json'), '{"name":"srv","version":"0.0.0"}');
  const outside = join(dir, 'w', 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'secret.txt'), 'TOKEN=outside every root');
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
  const boxed = await startProxied(t, {
    server: 'h',
    socket: d.socket,
    proxyArgs: ['--sandbox', '--no-enforce'],
    command: [process.execPath, join(srv, 'hostile.mjs')],
  });
  const attempt = (action: string, ref: string, to = '') =>
    boxed.call('attempt', { action, ref, to });
  t.match((await attempt('read', join(r, 'notes.txt'))).text, /^ok: notes$/, 'the server is up');

  let restarts = 0;
  /** The server makes a denied name appear, and the proxy restarts it with a new layout. */
  const restart = (why: string) => serverForcesRestart(boxed, join(r, `trigger${++restarts}`), why);

  /** [what, the link to make (under the root), where it leads] */
  const ROWS: [string, string, string][] = [
    [
      'a first line `#!` naming the directory above the root, in a script node runs',
      'dev/srv/hostile.mjs',
      join(dir, 'w'),
    ],
    [
      'node_modules above the package, relative, to the directory above the root',
      'dev/node_modules',
      '../..',
    ],
    [
      'node_modules at the root, absolute, to the directory above it',
      'node_modules',
      join(dir, 'w'),
    ],
  ];
  for (const [what, link, target] of ROWS) {
    if (link === 'dev/srv/hostile.mjs') {
      // Written by another server of the agent's with the same writable root (the filesystem
      // server): this one's program is read-only to it. Node skips a first line that is `#!`.
      const script = join(srv, 'hostile.mjs');
      writeFileSync(script, `#!${target}\n${readFileSync(script, 'utf8')}`);
    } else {
      t.match((await attempt('symlink', join(r, link), target)).text, /^ok/, `${what}: made`);
    }
    await restart(what);
    const secret = join(outside, 'secret.txt');
    for (const ref of [secret, join(r, 'node_modules', 'outside', 'secret.txt')]) {
      const read = await attempt('read', ref);
      t.equal(read.isError, true, `${what}: ${ref} is not readable`);
      t.notMatch(read.text, /TOKEN/, `${what}: nothing of the secret through ${ref}`);
    }
    t.match(
      (await attempt('read', join(r, 'notes.txt'))).text,
      /^ok: notes$/,
      `${what}: the server runs`,
    );
    // The person's root is still writable.
    t.match(
      (await attempt('write', join(r, `w${restarts}.txt`))).text,
      /^ok/,
      `${what}: the root is writable`,
    );
  }
});
