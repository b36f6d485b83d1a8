/**
 * A completion's argument or context argument named `__proto__`. The proxy copies the arguments
 * into a fresh object (`free[name] = value`, `filled[name] = value`) before it looks at them, and
 * assigning `__proto__` there sets nothing: the value is never checked. A server keeps the key as
 * any other (JSON.parse, object spread and computed keys make it an own property; Python's dict
 * has no such key), so `__proto__: "<root>/vault/"` lists the denied directory.
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

void t.test('a completion argument named __proto__ is checked too', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'docs'), { recursive: true });
  mkdirSync(join(w, 'vault'));
  mkdirSync(join(dir, 'outside'));
  writeFileSync(join(w, `vault/${MARK}-denied.txt`), '');
  writeFileSync(join(dir, `outside/${MARK}-outside.txt`), '');
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  shapes:\n    roots:\n      - path: ${w}\n    deny:\n      - ${w}/vault\n`,
    { dir },
  );
  const s = await startProxiedShapes(t, { server: 'shapes', socket: d.socket });

  // Built by JSON.parse, as the proxy and the server read the line: `__proto__` is an own key.
  const own = (json: string) => JSON.parse(json) as Record<string, unknown>;
  const rows: [string, Record<string, unknown>][] = [
    [
      'the argument completed, named __proto__, a denied directory',
      own(
        `{"ref":{"type":"ref/prompt","name":"summarize"},"argument":{"name":"__proto__","value":${JSON.stringify(`${w}/vault/`)}}}`,
      ),
    ],
    [
      'the argument completed, named __proto__, a directory outside every root',
      own(
        `{"ref":{"type":"ref/prompt","name":"summarize"},"argument":{"name":"__proto__","value":${JSON.stringify(`${dir}/outside/`)}}}`,
      ),
    ],
    [
      'a file: template whose variable is __proto__, filled with the denied directory',
      own(
        `{"ref":{"type":"ref/resource","uri":${JSON.stringify(`file://${w}/{+__proto__}`)}},"argument":{"name":"__proto__","value":"vault/"}}`,
      ),
    ],
    [
      'a context argument named __proto__',
      own(
        `{"ref":{"type":"ref/prompt","name":"summarize"},"argument":{"name":"topic","value":"x"},"context":{"arguments":{"__proto__":${JSON.stringify(`${w}/vault/`)}}}}`,
      ),
    ],
  ];
  for (const [what, params] of rows) {
    const r = await s.complete(params);
    t.notOk(r.text.includes(MARK), `${what}: nothing there is listed: ${r.text.slice(0, 200)}`);
    t.match(r.text, /mcp-roots-proxy refused completing/, `${what}: refused by the proxy`);
  }
});
