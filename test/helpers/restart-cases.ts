/**
 * What a host of each era must see when the proxy restarts its server behind its back: the
 * server's directories follow the policy in the same session, and the host's subscriptions follow
 * the server. One test file per host (test/proxy/era/restart-*.test.ts) keeps each within the
 * runner's time limit on a busy machine.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Test } from 'tap';
import { startDaemon } from './daemon.js';
import { FS2_SERVER, startEraHost, type EraHost, type HostKind } from './era-host.js';
import { ownedShortDir, waitFor } from './proxy.js';
import { fixtureServer } from './repo.js';

const SUBSCRIPTIONS_SERVER = fixtureServer('subscriptions.mjs');

/** `list_allowed_directories` of the filesystem server, sorted. */
async function allowed(host: EraHost): Promise<string[]> {
  const { text } = await host.call('list_allowed_directories');
  return text
    .split('\n')
    .slice(1)
    .filter((l) => l.trim() !== '')
    .sort();
}

/** Wait until the server's directories are `want`, asking through the host's own session. */
async function untilAllowed(host: EraHost, want: string[], what: string): Promise<void> {
  const sorted = [...want].sort().join('\n');
  let last = '';
  await waitFor(
    async () => {
      last = (await allowed(host)).join('\n');
      return last === sorted;
    },
    30_000,
    what,
  ).catch((err: Error) => {
    throw new Error(
      `${err.message}; the server lists:\n${last}\nthe proxy's log:\n${host.stderr()}`,
    );
  });
}

/**
 * server-filesystem 2.0.1 started as `{roots}`: in a 2026-07-28 session it never asks for roots,
 * so its command line is all it serves. A grant, a new glob match, an expiry and a revoke each
 * restart it; the host's session goes on and sees the new directories.
 */
export async function followsPolicyCase(t: Test, kind: HostKind): Promise<void> {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  for (const d of ['alpha', 'proj/one', 'granted', 'soon']) {
    mkdirSync(join(w, d), { recursive: true });
  }
  const policy = `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${w}/alpha\n      - path: ${w}/proj/*\n`;
  const d = await startDaemon(t, policy, { dir });
  const admin = await d.connect('admin');
  const host = await startEraHost(t, {
    kind,
    server: 'fs',
    socket: d.socket,
    serverCommand: [process.execPath, FS2_SERVER, '{roots}'],
  });
  if (kind !== 'v1') t.equal(host.version, '2026-07-28', 'the session is 2026-07-28');
  const logged = (what: string) => waitFor(() => host.stderr().includes(what), 30_000, what);

  await untilAllowed(host, [`${w}/alpha`, `${w}/proj/one`], 'the policy’s roots');

  await admin.grant('fs', join(w, 'granted'), { seconds: 600 });
  await untilAllowed(host, [`${w}/alpha`, `${w}/granted`, `${w}/proj/one`], 'a grant');
  await logged(`restarting the server: its roots changed (+${w}/granted)`);

  mkdirSync(join(w, 'proj/two'));
  const all = [`${w}/alpha`, `${w}/granted`, `${w}/proj/one`, `${w}/proj/two`];
  await untilAllowed(host, all, 'a new glob match');

  // An expiry: a grant seen in the server's list, then given again to end a second later (a
  // grant again replaces the first): seen first whatever the machine's load, then no long wait.
  await admin.grant('fs', join(w, 'soon'), { seconds: 600 });
  await untilAllowed(host, [...all, `${w}/soon`], 'a grant to expire');
  await admin.grant('fs', join(w, 'soon'), { seconds: 1 });
  await untilAllowed(host, all, 'its expiry');
  await logged(`restarting the server: its roots changed (-${w}/soon)`);

  await admin.revoke('fs', join(w, 'granted'));
  await untilAllowed(host, [`${w}/alpha`, `${w}/proj/one`, `${w}/proj/two`], 'a revoke');
  const restarts = host.stderr().split('restarting the server:').length - 1;
  t.ok(restarts >= 5, `one restart per change at least (${restarts})`);
  t.notMatch(host.stderr(), /did not take the host's session/, 'every restart took the session');
  // Still the first session, and the new server is checked like the first.
  mkdirSync(join(w, 'proj/two/inside'));
  t.match(await host.call('list_directory', { path: `${w}/proj/two` }), {
    isError: false,
    text: /inside/,
  });
  const refused = await host.call('list_directory', { path: join(w, 'granted') });
  t.equal(refused.isError, true, 'a revoked directory is refused');
}

/** The fixture server's record: what each of its processes was asked to subscribe to. */
function recorded(file: string): { pid: number; method: string; id: unknown; params: unknown }[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as { pid: number; method: string; id: unknown; params: unknown });
}

/**
 * The host's subscriptions reach the restarted server (2025: `resources/subscribe` replayed; 2026:
 * the `subscriptions/listen` stream sent again under the host's id, its second acknowledgement
 * kept from the host), the host hears `list_changed` only for the list that differs (resources,
 * one per directory; the tools stay the same), a call in flight completes, and one that never
 * would fails with a clear error.
 */
export async function subscriptionsCase(t: Test, kind: HostKind): Promise<void> {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'p/a'), { recursive: true });
  const record = join(dir, 'record.jsonl');
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  s:\n    roots:\n      - path: ${w}/p/*\n`,
    {
      dir,
    },
  );
  const host = await startEraHost(t, {
    kind,
    server: 's',
    socket: d.socket,
    serverCommand: [process.execPath, SUBSCRIPTIONS_SERVER, `--record=${record}`, '{roots}'],
  });
  const modern = kind !== 'v1';
  const watched = pathToFileURL(`${w}/p/a`).href;
  const filter = {
    toolsListChanged: true,
    resourcesListChanged: true,
    resourceSubscriptions: [watched],
  };
  if (modern) {
    const v2 = host.client as import('@modelcontextprotocol/client').Client;
    await v2.listen(filter);
  } else {
    const v1 = host.client as import('@modelcontextprotocol/sdk/client/index.js').Client;
    await v1.subscribeResource({ uri: watched });
  }
  const subscribeMethod = modern ? 'subscriptions/listen' : 'resources/subscribe';
  const firstPid = recorded(record).find((r) => r.method === subscribeMethod)?.pid;
  t.ok(firstPid, `the first server got ${subscribeMethod}`);

  // A call in flight when the roots change completes on the old server before it is stopped.
  const flag = join(w, 'p/a/go');
  const slow = host.call('wait-for', { ref: flag });
  await waitFor(
    () => host.stderr().includes('subscriptions-fixture: tools/call wait-for'),
    30_000,
    'the call sent',
  );
  mkdirSync(join(w, 'p/b'));
  await waitFor(() => host.stderr().includes('call(s) in flight'), 30_000, 'the restart waiting');
  const held = host.call('argv');
  writeFileSync(flag, '');
  t.same(await slow, { text: 'ok: it exists', isError: false }, 'the call in flight completes');
  t.same(JSON.parse((await held).text), [`${w}/p/a`, `${w}/p/b`], 'the held call: the new server');

  const again = recorded(record).filter((r) => r.method === subscribeMethod && r.pid !== firstPid);
  t.equal(again.length, 1, `the new server got ${subscribeMethod} once`);
  if (modern) {
    const first = recorded(record).find((r) => r.pid === firstPid && r.method === subscribeMethod);
    t.same(again[0]?.id, first?.id, 'under the host’s own stream id');
    t.match(again[0]?.params, { notifications: filter }, 'with the host’s filter');
    const openings = recorded(record).filter((r) => r.method === 'server/discover');
    t.ok(
      openings.some((r) => r.pid === again[0]?.pid),
      'the new server was probed, not initialized',
    );
    t.notOk(
      recorded(record).some((r) => r.method === 'initialize'),
      'nobody sent initialize',
    );
  } else {
    t.match(again[0]?.params, { uri: watched }, 'the same resource');
  }

  // A call that never finishes fails with a clear error once the restart stops waiting for it.
  const hung = host.call('wait-for', { ref: join(w, 'p/a/never') }).then(
    () => undefined,
    (err: unknown) => err as Error,
  );
  const calls = () => host.stderr().split('subscriptions-fixture: tools/call wait-for').length - 1;
  await waitFor(() => calls() >= 2, 30_000, 'the second call sent');
  mkdirSync(join(w, 'p/c'));
  t.match(
    (await hung)?.message,
    /restarted the server \(its roots changed \(\+.*\/p\/c\)\) before it answered; call again/,
    'a call that never finishes fails, saying why',
  );
  t.same(JSON.parse((await host.call('argv')).text), [`${w}/p/a`, `${w}/p/b`, `${w}/p/c`]);

  await waitFor(
    () => host.notices().some((n) => n.method === 'notifications/resources/list_changed'),
    30_000,
    'resources/list_changed',
  );
  // The proxy tells the lists in a fixed order (tools, prompts, resources): nothing more can come.
  await waitFor(() => host.notices().length >= 2, 30_000, 'the second resources/list_changed');
  t.same(
    host.notices().map((n) => n.method),
    ['notifications/resources/list_changed', 'notifications/resources/list_changed'],
    'only the list that differs, once per restart',
  );
  if (modern) {
    t.match(
      host.notices()[0]?.params,
      { _meta: { 'io.modelcontextprotocol/subscriptionId': String } },
      'on the host’s stream',
    );
  }
}
