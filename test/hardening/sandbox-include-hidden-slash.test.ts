/**
 * An include glob whose brace holds a slash behind a class (`{x,[w]/a}`): the proxy's
 * `couldMatchBelow` looks for a group holding a slash with `/[{([][^})\]]*\//`, which stops at the
 * class's `]` and so misses it, then matches segment by segment (`{x,[w]` matches nothing). The
 * daemon's glob is the whole pattern: `{x,[w]/a}/**\/*.yaml` matches `w/a/zz.yaml`, and `**` makes
 * its walk recursive. A writable root `base/w/a` is laid out, and a file the server makes there is
 * policy. The sandbox should refuse to start, as for `base/*\/*.yaml`.
 *
 * Real daemon, real proxy under bubblewrap, the hostile fixture server.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, proxiedTransport } from '../helpers/proxied-server.js';
import { ownedShortDir } from '../helpers/proxy.js';

const grant = (path: string) => `version: 1\nservers:\n  h:\n    roots: [{path: ${path}}]\n`;
const policy = (r: string, include: string) =>
  `version: 1\ninclude: ["${include}"]\nservers:\n  h:\n    roots:\n      - path: ${r}\n`;

void t.test('a brace holding a slash behind a class: the server is not started', async (t) => {
  const dir = ownedShortDir(t);
  const base = join(dir, 'w');
  const r = join(base, 'w', 'a');
  mkdirSync(r, { recursive: true });
  const d = await startDaemon(t, policy(r, `${base}/{x,[w]/a}/**/*.yaml`), { dir });
  const c = await d.connect();

  const { transport, stderr } = proxiedTransport({
    server: 'h',
    socket: d.socket,
    proxyArgs: ['--sandbox', '--no-enforce'],
    command: [process.execPath, HOSTILE_SERVER],
  });
  const client = new Client({ name: 'test-host', version: '0' });
  t.teardown(() => client.close());
  const err = await client.connect(transport).then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  t.ok(err, "the host's initialize fails");
  t.match(err?.message, /include pattern .*could match a file the server creates/, 'it says why');
  t.match(stderr(), /include pattern/, "the proxy's log says the same");
  if (err === undefined) {
    const made = await client.callTool({
      name: 'attempt',
      arguments: { action: 'write', ref: join(r, 'zz.yaml'), to: '' },
    });
    const text = (made.content as { text: string }[])[0]?.text ?? '';
    t.notMatch(text, /^ok/, `the server makes no file in its root the include matches: ${text}`);
  }

  // What such a file is to the daemon: policy (the fixture writes a fixed text; the grant a
  // server would write, written here).
  writeFileSync(join(r, 'zz.yaml'), grant(dir));
  await c.reload();
  const uris = (await c.listRoots('h')).roots.map((x) => x.uri);
  t.ok(
    uris.some((u) => u.endsWith(dir) || u.endsWith(dir + '/')),
    `the daemon loads it as policy (roots: ${uris.join(' ')})`,
  );
});
