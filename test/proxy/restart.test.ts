/**
 * A server started with its roots on the command line is restarted behind a 2025-era host (SDK
 * v1 Client) whenever they change: the host's session goes on, with no reconnect.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, startProxied, type Proxied } from '../helpers/proxied-server.js';
import { FS_SERVER, ownedShortDir, waitFor } from '../helpers/proxy.js';

/** `list_allowed_directories` of the filesystem server, sorted. */
async function allowed(s: Proxied): Promise<string[]> {
  const { text } = await s.call('list_allowed_directories');
  return text
    .split('\n')
    .slice(1)
    .filter((l) => l.trim() !== '')
    .sort();
}

/** Wait until the server's directories are `want`, polling the host's own tool call. */
async function untilAllowed(s: Proxied, want: string[], what: string): Promise<void> {
  const sorted = [...want].sort().join('\n');
  let last = '';
  await waitFor(
    async () => {
      last = (await allowed(s)).join('\n');
      return last === sorted;
    },
    30_000,
    what,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; the server lists:\n${last}\nthe proxy's log:\n${s.stderr()}`);
  });
}

void t.test('server-filesystem started as {roots} follows the policy', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['alpha', 'proj/one', 'granted', 'soon'])
    mkdirSync(join(w, d), { recursive: true });
  const d = await startDaemon(
    t,
    `version: 1
servers:
  fs:
    roots:
      - path: ${w}/alpha
      - path: ${w}/proj/*
`,
    { dir },
  );
  const admin = await d.connect('admin');
  const fs = await startProxied(t, {
    server: 'fs',
    socket: d.socket,
    command: [process.execPath, FS_SERVER, '{roots}'],
  });
  const restarts = () => fs.stderr().split('restarting the server:').length - 1;
  const logged = (what: string) => waitFor(() => fs.stderr().includes(what), 30_000, what);

  await untilAllowed(fs, [`${w}/alpha`, `${w}/proj/one`], 'the policy’s roots');

  await admin.grant('fs', join(w, 'granted'), { seconds: 600 });
  await untilAllowed(fs, [`${w}/alpha`, `${w}/granted`, `${w}/proj/one`], 'a grant');
  // The server also hears of the change as roots/list_changed: the restart may come just after.
  await logged(`restarting the server: its roots changed (+${w}/granted)`);

  mkdirSync(join(w, 'proj/two'));
  const all = [`${w}/alpha`, `${w}/granted`, `${w}/proj/one`, `${w}/proj/two`];
  await untilAllowed(fs, all, 'a new glob match');

  // An expiry: a grant seen in the server's list, then given again to end a second later (a
  // grant again replaces the first): seen first whatever the machine's load, then no long wait.
  await admin.grant('fs', join(w, 'soon'), { seconds: 600 });
  await untilAllowed(fs, [...all, `${w}/soon`], 'a grant to expire');
  await admin.grant('fs', join(w, 'soon'), { seconds: 1 });
  await untilAllowed(fs, all, 'its expiry');
  await logged(`restarting the server: its roots changed (-${w}/soon)`);

  await admin.revoke('fs', join(w, 'granted'));
  await untilAllowed(fs, [`${w}/alpha`, `${w}/proj/one`, `${w}/proj/two`], 'a revoke');
  t.ok(restarts() >= 4, `one restart per change at least (${restarts()})`);
  // Still the first session: the host never reconnected, and its calls still work.
  t.same(fs.client.getServerVersion()?.name, 'secure-filesystem-server');
  mkdirSync(join(w, 'proj/two/inside'));
  t.match(await fs.call('list_directory', { path: `${w}/proj/two` }), {
    isError: false,
    text: /inside/,
  });
});

void t.test('calls in flight and calls held during a restart', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'p/a'), { recursive: true });
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  h:\n    roots:\n      - path: ${w}/p/*\n`,
    {
      dir,
    },
  );
  const h = await startProxied(t, {
    server: 'h',
    socket: d.socket,
    command: [process.execPath, HOSTILE_SERVER, '{roots}'],
  });
  const argv = async () => (JSON.parse((await h.call('launch')).text) as { argv: string[] }).argv;
  t.same(await argv(), [`${w}/p/a`]);

  // A call in flight when the roots change is answered by the old server before it is stopped.
  // Inside a root: the proxy checks absolute paths by value, whatever the argument's name.
  const flag = join(w, 'p/a/go');
  const slow = h.call('attempt', { action: 'wait-for', ref: flag });
  await waitFor(() => h.stderr().includes('hostile: attempt wait-for'), 30_000, 'the call sent');
  mkdirSync(join(w, 'p/b'));
  await waitFor(() => h.stderr().includes('call(s) in flight'), 30_000, 'the restart waiting');
  // A call that arrives now is held, and answered by the new server.
  const held = argv();
  writeFileSync(flag, '');
  t.same(await slow, { text: 'ok: it exists', isError: false }, 'the call in flight completes');
  t.same(await held, [`${w}/p/a`, `${w}/p/b`], 'the held call reaches the new server');

  // A call that never finishes fails with a clear error once the restart stops waiting.
  const hung = h.call('attempt', { action: 'hang', ref: '' }).then(
    () => undefined,
    (err: unknown) => err as Error,
  );
  await waitFor(() => h.stderr().includes('hostile: attempt hang'), 30_000, 'the call sent');
  mkdirSync(join(w, 'p/c'));
  const err = await hung;
  t.match(
    err?.message,
    /restarted the server \(its roots changed \(\+.*\/p\/c\)\) before it answered; call again/,
  );
  t.same(await argv(), [`${w}/p/a`, `${w}/p/b`, `${w}/p/c`]);
});

void t.test('a server with no root yet is not started; it starts when it gets one', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'later'), { recursive: true });
  const d = await startDaemon(t, `version: 1\nservers:\n  other:\n    roots: []\n`, { dir });
  const admin = await d.connect('admin');
  const h = await startProxied(t, {
    server: 'none-yet',
    socket: d.socket,
    // Only a grant will name it: the policy is about to gain it.
    proxyArgs: ['--allow-unknown-server'],
    command: [process.execPath, HOSTILE_SERVER, '--mark=' + join(dir, 'started'), '{roots}'],
  });
  t.match(h.client.getServerVersion()?.name, /not started yet/);
  t.same((await h.client.listTools()).tools, [], 'no tools while it has no root');
  t.match(h.stderr(), /\{roots\} has nothing to stand for/);
  const call = await h.client.callTool({ name: 'launch', arguments: {} }).then(
    () => '',
    (e: unknown) => (e as Error).message,
  );
  t.match(call, /is not running: \{roots\} has nothing to stand for/);
  // rootsctl as the person can run it, with the proxy's socket, and the server named.
  const ctl = /or lockdown on: `(.+) status` and `(.+) explain none-yet` say which/.exec(call);
  t.ok(ctl, 'what to look at');
  t.equal(ctl?.[1], ctl?.[2], 'the same rootsctl in both');
  t.ok(ctl?.[1]?.endsWith(` --socket ${d.socket}`), "with the proxy's socket");

  await admin.grant('none-yet', join(w, 'later'), { seconds: 600 });
  await waitFor(() => h.toolsChanged() > 0, 30_000, 'tools/list_changed');
  t.same(
    (await h.client.listTools()).tools.map((x) => x.name).sort(),
    ['attempt', 'launch'],
    'the real tools, in the same session',
  );
  t.same(JSON.parse((await h.call('launch')).text).argv.slice(1), [`${w}/later`]);
});
