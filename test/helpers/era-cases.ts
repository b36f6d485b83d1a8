/**
 * What each SDK host (the v2 client in auto and pinned 2026-07-28 mode, the v1 client) must get
 * through the proxy, from server-filesystem 2.0.1 and from a server built with the v2 SDK that
 * asks for roots. One test file per host and server (test/proxy/era/), so that each stays within
 * the runner's time limit on a busy machine: an auto-mode host starts the proxy twice.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Test } from 'tap';
import { startDaemon } from './daemon.js';
import { FS2_SERVER, HOST_ROOT, startEraHost, type HostKind } from './era-host.js';
import { eraWorld } from './era-policy.js';
import { ownedShortDir } from './proxy.js';
import { fixtureServer } from './repo.js';

const FIXTURE = fixtureServer('v2-roots.mjs');

/**
 * server-filesystem 2.0.1: allowed calls work, refused ones reach the host as tool errors it shows
 * (a 2026-07-28 client rejects a result without `resultType`), and a read-only root may be read
 * but not written, because the tools were learnt whatever the era.
 */
export async function filesystemCase(t: Test, kind: HostKind): Promise<void> {
  const dir = ownedShortDir(t);
  const world = eraWorld(dir, ['fs2']);
  const { w } = world;
  const d = await startDaemon(t, world.policy, { dir });
  // The command line names all of `w`: in a 2026-07-28 session the server never asks for roots,
  // so only the proxy keeps it inside the policy.
  const host = await startEraHost(t, {
    kind,
    server: 'fs2',
    socket: d.socket,
    serverCommand: [process.execPath, FS2_SERVER, w],
  });
  if (kind !== 'v1') t.equal(host.version, '2026-07-28', 'the session is 2026-07-28');

  const read = await host.call('read_text_file', { path: join(w, 'in', 'a.txt') });
  t.same(read, { text: 'inside', isError: false }, 'a read inside a root works');
  t.same(
    await host.call('read_text_file', { path: join(w, 'ro', 'r.txt') }),
    { text: 'read-only', isError: false },
    'so does a read in a read-only root (the tool was learnt as read-only)',
  );

  const cases: [string, Record<string, unknown>][] = [
    ['read_text_file', { path: join(w, 'out', 'secret.txt') }],
    ['read_multiple_files', { paths: [join(w, 'in', 'a.txt'), join(w, 'out', 'secret.txt')] }],
    ['write_file', { path: join(w, 'ro', 'new.txt'), content: 'x' }],
    ['write_file', { path: join(w, 'out', 'new.txt'), content: 'x' }],
    ['move_file', { source: join(w, 'in', 'a.txt'), destination: join(w, 'ro', 'a.txt') }],
    ['list_directory', { path: w }],
  ];
  for (const [tool, args] of cases) {
    const r = await host.call(tool, args);
    t.equal(r.isError, true, `${tool} ${JSON.stringify(args)}: a tool error`);
    t.match(r.text, `mcp-roots-proxy refused ${tool}`, `${tool}: the refusal is shown`);
  }
  const write = await host.call('write_file', { path: join(w, 'in', 'b.txt'), content: kind });
  t.equal(write.isError, false, 'a write in the writable root works');
}

/**
 * A v2 SDK server whose tools ask for input: its roots come from the policy whether it asks alone
 * or beside an elicitation, a server asking for ever is stopped, and tools whose paths only their
 * `tools/list` schema reveals (`format: uri` under names no guess takes) are enforced.
 */
export async function fixtureCase(t: Test, kind: HostKind): Promise<void> {
  const dir = ownedShortDir(t);
  const world = eraWorld(dir, ['v2']);
  const { w, rootUris } = world;
  const d = await startDaemon(t, world.policy, { dir });
  const uri = (p: string) => pathToFileURL(`${w}/${p}`).href;
  const host = await startEraHost(t, {
    kind,
    server: 'v2',
    socket: d.socket,
    serverCommand: [process.execPath, FIXTURE],
  });
  const modern = kind !== 'v1';
  if (modern) t.equal(host.version, '2026-07-28', 'the session is 2026-07-28');

  const roots = await host.call('roots');
  t.same(roots, { text: rootUris.join('\n'), isError: false }, 'the server got the policy’s roots');
  t.notOk(roots.text.split('\n').includes(HOST_ROOT), 'the host’s roots never reached it');

  const both = await host.call('roots_confirm');
  t.same(
    JSON.parse(both.text),
    { roots: rootUris, confirm: { action: 'accept', content: { ok: true } } },
    'roots from the policy, the elicitation answered by the host',
  );
  t.equal(host.hostRootsCalls(), 0, 'the host was never asked for roots');

  const forever = await host.call('roots_forever');
  t.equal(forever.isError, true, 'a server asking for roots without end is stopped');
  if (modern) t.match(forever.text, /asked for roots\/list 4 times for one tools\/call/);

  const cases: [string, Record<string, unknown>, boolean][] = [
    ['open', { location: uri('in/a.txt') }, false],
    ['open', { location: uri('ro/r.txt') }, false],
    ['open', { location: uri('out/secret.txt') }, true],
    ['open', { location: 'file:///etc/passwd' }, true],
    ['stamp', { target: uri('in/a.txt') }, false],
    ['stamp', { target: uri('ro/r.txt') }, true],
    ['stamp', { target: uri('out/secret.txt') }, true],
  ];
  for (const [tool, args, refused] of cases) {
    const r = await host.call(tool, args);
    const what = `${tool} ${JSON.stringify(args)}`;
    t.equal(r.isError, refused, `${what}: ${refused ? 'refused' : 'allowed'}`);
    if (refused) t.match(r.text, `mcp-roots-proxy refused ${tool}`, `${what}: the reason shown`);
  }
}
