/**
 * A subscriber that falls behind gets only the newest list per server (protocol/connection.ts
 * `notifyLatest`). An attacker would like a narrowing (a revocation) to be lost among dropped
 * pushes, or overtaken: a push of the wider list arriving after the narrow one, or a `roots/list`
 * answer computed earlier arriving later. With two servers on one connection, large lists, the
 * subscriber not reading while the lists grow and then narrow, and a `roots/list` answer queued
 * among the pushes, whatever the subscriber reads, applied by revision as the proxy applies it, ends at
 * the narrow list for each server; nothing read at or after the narrowing's revision is wide;
 * and the subscriber stays connected.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { shortDir, startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';
import { rawConnect } from '../helpers/raw.js';

const SERVERS = ['a', 'b'];

function policy(dir: string, wide: boolean): string {
  const root = wide ? `${dir}/many/*` : `${dir}/few/*`;
  return `version: 1\nservers:\n${SERVERS.map((s) => `  ${s}:\n    roots: [{path: ${root}}]\n`).join('')}`;
}

interface Seen {
  revision: number;
  roots: string[];
}

void t.test('a slow subscriber never ends on a list wider than the newest', async (t) => {
  const dir = shortDir();
  // About 300 KB a list: a few pushes pile up well past the 1 MiB cap on queued output.
  for (let i = 0; i < 3000; i++)
    mkdirSync(join(dir, 'many', `directory-with-a-long-name-${i}`), { recursive: true });
  mkdirSync(join(dir, 'few', 'only'), { recursive: true });
  const d = await startDaemon(t, policy(dir, true), { dir });
  const raw = await rawConnect(d.socket);
  t.teardown(() => raw.close());
  let id = 0;
  const list = (server: string, subscribe = false) =>
    raw.send(
      `${JSON.stringify({ jsonrpc: '2.0', id: ++id, method: 'roots/list', params: { server, subscribe } })}\n`,
    );
  const answers = new Map<number, string>();
  for (const s of SERVERS) {
    list(s, true);
    answers.set(id, s);
    await raw.next();
  }
  raw.socket.pause();
  // The lists grow (each change a push of the whole list to both servers), with requests in
  // between whose answers queue behind the pushes, then narrow.
  for (let i = 0; i < 4; i++) {
    const name = `new-${i}`;
    mkdirSync(join(dir, 'many', name));
    await waitFor(
      () => d.daemon.state.roots('a').some((r) => r.uri.endsWith(`/${name}`)),
      30_000,
      `${name} listed`,
    );
    // One answer of a wide list in the middle: answers are not superseded, and a client that
    // asks for many large ones without reading them is cut off at the 1 MiB cap by design.
    if (i === 1) {
      list('a');
      answers.set(id, 'a');
    }
  }
  d.writePolicy(policy(dir, false));
  await waitFor(
    () => SERVERS.every((s) => d.daemon.state.roots(s).length === 1),
    30_000,
    'the narrowing',
  );
  const narrowRevision = d.daemon.state.revision;
  // Nothing asked after the narrowing: the pushes alone must bring it.
  const lastId = id;
  t.equal(d.daemon.server.clientCount, 1, 'still connected while not reading');
  raw.socket.resume();

  // Read until the last answer and then until every server's newest is narrow; apply by
  // revision, as the proxy does (an older revision is ignored).
  const applied = new Map<string, Seen>();
  const read: { server: string; seen: Seen }[] = [];
  let lastAnswered = false;
  const narrowEverywhere = () =>
    SERVERS.every((s) => (applied.get(s)?.revision ?? -1) >= narrowRevision);
  while (!lastAnswered || !narrowEverywhere()) {
    const line = await raw.next();
    let server: string;
    let seen: Seen;
    if (line.method === 'notifications/roots/list_changed') {
      const p = line.params as { server: string; revision: number; roots: { uri: string }[] };
      server = p.server;
      seen = { revision: p.revision, roots: p.roots.map((r) => r.uri) };
    } else {
      const r = line.result as { roots: { uri: string }[]; _meta: Record<string, number> };
      server = answers.get(line.id as number)!;
      seen = { revision: r._meta['mcp-roots/revision']!, roots: r.roots.map((x) => x.uri) };
      if (line.id === lastId) lastAnswered = true;
    }
    read.push({ server, seen });
    const before = applied.get(server);
    if (before === undefined || seen.revision >= before.revision) applied.set(server, seen);
  }
  for (const s of SERVERS) {
    t.same(
      applied.get(s)!.roots.map((u) => u.replace(/.*\//, '')),
      ['only'],
      `${s} ends on the narrow list`,
    );
  }
  const wideLate = read.filter((r) => r.seen.revision >= narrowRevision && r.seen.roots.length > 1);
  t.same(wideLate, [], 'nothing at or after the narrowing is wide');
  t.equal(d.daemon.server.clientCount, 1, 'and it is still connected');
});
