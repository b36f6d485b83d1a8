/**
 * A `file:` resource template with a prefix modifier (`{+path:4}`, RFC 6570: only the first 4
 * characters of the value go into the URI). The proxy fills the template with the value cut to
 * the prefix and checks that, yet a server completing the variable is given the whole value (the
 * SDKs pass `argument.value` to the completer as it is) and lists what it names. Completing
 * `vault/` in `file:///<root>/{+path:4}` checks `<root>/vaul` and lists the denied `<root>/vault/`.
 *
 * Real daemon, real proxy, the SDK host and the shapes fixture server.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { startProxiedShapes } from '../helpers/shapes-server.js';

const MARK = 'MARK-VAULT';

void t.test('a template’s prefix modifier does not cut what is checked', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'docs'), { recursive: true });
  mkdirSync(join(w, 'vault'));
  writeFileSync(join(w, `vault/${MARK}-denied.txt`), '');
  writeFileSync(join(w, 'docs/ok.txt'), '');
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  shapes:\n    roots:\n      - path: ${w}\n    deny:\n      - ${w}/vault\n`,
    { dir },
  );
  const s = await startProxiedShapes(t, { server: 'shapes', socket: d.socket });
  const rows: [string, Record<string, unknown>][] = [
    [
      '{+path:4} completed with vault/',
      {
        ref: { type: 'ref/resource', uri: `file://${w}/{+path:4}` },
        argument: { name: 'path', value: 'vault/' },
      },
    ],
    [
      '{+path:5} completed with docs/../vault/',
      {
        ref: { type: 'ref/resource', uri: `file://${w}/{+path:5}` },
        argument: { name: 'path', value: 'docs/../vault/' },
      },
    ],
  ];
  for (const [what, params] of rows) {
    const r = await s.complete(params);
    t.notOk(r.text.includes(MARK), `${what}: nothing there is listed: ${r.text.slice(0, 200)}`);
    t.match(r.text, /mcp-roots-proxy refused completing/, `${what}: refused by the proxy`);
  }
  // The control: an allowed directory through the same template is completed.
  const ok = await s.complete({
    ref: { type: 'ref/resource', uri: `file://${w}/{+path:5}` },
    argument: { name: 'path', value: 'docs/' },
  });
  t.match(ok.text, /ok\.txt/, `docs/ through {+path:5}: completed: ${ok.text.slice(0, 200)}`);
});
