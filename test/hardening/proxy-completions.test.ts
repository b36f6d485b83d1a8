/**
 * `completion/complete` asks a server what an argument of a prompt or of a resource template could
 * become, and a server completing a path lists the directory the value lies in. The proxy relayed
 * it unchecked: completing `<root>/vault/` listed the denied directory, `/outside/` a directory
 * outside every root, and the root's own name its parent. It is now checked as a prompt's arguments
 * are (by name and by value, for reading; the argument completed and the context's arguments), a
 * `file:` resource template filled in with them, and the directory each path lies in.
 *
 * Real daemon, real proxy, the SDK host and a server (the shapes fixture) that lists what it is
 * asked to complete. Every name the server could list where it must not holds the marker.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { startProxiedShapes } from '../helpers/shapes-server.js';

const MARK = 'MARK-VAULT';

const prompt = (name: string) => ({ type: 'ref/prompt', name });
const template = (uri: string) => ({ type: 'ref/resource', uri });
const arg = (name: string, value: string) => ({ name, value });

/** [what, params, the refusal's reason, or the name an allowed completion offers] */
type Row = [string, (w: string, dir: string) => Record<string, unknown>, RegExp | string];

/** `w` without its leading slash, for a template that starts `file:///`. */
const rel = (p: string) => p.slice(1);

const ROWS: Row[] = [
  // A prompt's argument, by name.
  [
    'the denied directory',
    (w) => ({ ref: prompt('explain_file'), argument: arg('path', `${w}/vault/`) }),
    /denied/,
  ],
  [
    'a name in the denied directory',
    (w) => ({ ref: prompt('explain_file'), argument: arg('path', `${w}/vault/MA`) }),
    /denied/,
  ],
  [
    'a directory outside every root',
    (_, d) => ({ ref: prompt('explain_file'), argument: arg('path', `${d}/outside/`) }),
    /outside/,
  ],
  [
    'the root’s own name, which lists its parent',
    (w) => ({ ref: prompt('explain_file'), argument: arg('path', w) }),
    /outside/,
  ],
  [
    'a link into the denied directory',
    (w) => ({ ref: prompt('explain_file'), argument: arg('path', `${w}/docs/lnk/`) }),
    /denied/,
  ],
  [
    'a relative path',
    () => ({ ref: prompt('explain_file'), argument: arg('path', 'vault/') }),
    /relative/,
  ],
  [
    'a .. segment',
    (w) => ({ ref: prompt('explain_file'), argument: arg('path', `${w}/docs/../vault/`) }),
    /\.\. segment/,
  ],
  // By value, whatever the argument's name.
  [
    'a path by value',
    (w) => ({ ref: prompt('summarize'), argument: arg('topic', `${w}/vault/`) }),
    /denied/,
  ],
  [
    'a file URI by value',
    (w) => ({ ref: prompt('summarize'), argument: arg('topic', `file://${w}/vault/`) }),
    /denied/,
  ],
  // The arguments already given, in the context.
  [
    'a context argument by name',
    (w) => ({
      ref: prompt('summarize'),
      argument: arg('topic', 'x'),
      context: { arguments: { path: `${w}/vault/` } },
    }),
    /denied/,
  ],
  [
    'a context argument by value',
    (_, d) => ({
      ref: prompt('summarize'),
      argument: arg('topic', 'x'),
      context: { arguments: { other: `${d}/outside/` } },
    }),
    /outside/,
  ],
  // A file: resource template, filled in.
  [
    'a template filled with the denied directory',
    (w) => ({ ref: template('file:///{+path}'), argument: arg('path', `${rel(w)}/vault/`) }),
    /denied/,
  ],
  [
    'a template filled with a directory outside',
    (_, d) => ({ ref: template('file:///{+path}'), argument: arg('path', `${rel(d)}/outside/`) }),
    /outside/,
  ],
  [
    'a template whose context names the directory',
    (w) => ({
      ref: template('file:///{+dir}/{name}'),
      argument: arg('name', ''),
      context: { arguments: { dir: `${rel(w)}/vault` } },
    }),
    /denied/,
  ],
  [
    'a template filled with %2e%2e',
    (w) => ({
      ref: template('file:///{+path}'),
      argument: arg('path', `${rel(w)}/docs/%2e%2e/vault/`),
    }),
    /holds %/,
  ],
  [
    'a template filled with ..',
    (w) => ({
      ref: template('file:///{+path}'),
      argument: arg('path', `${rel(w)}/docs/../vault/`),
    }),
    /dot segment/,
  ],
  [
    'a template filled through a link',
    (w) => ({ ref: template('file:///{+path}'), argument: arg('path', `${rel(w)}/docs/lnk/`) }),
    /denied/,
  ],
  [
    'a template with a host',
    (w) => ({
      ref: template('file://{host}/{+path}'),
      argument: arg('path', `${rel(w)}/vault/`),
      context: { arguments: { host: 'x' } },
    }),
    /host/,
  ],
  [
    'a template that is not one',
    (w) => ({ ref: template(`file://${w}/{path`), argument: arg('path', 'vault/') }),
    /template/,
  ],
  // Shapes a server may read otherwise.
  [
    'an argument without a name',
    (w) => ({ ref: prompt('explain_file'), argument: { value: `${w}/vault/` } }),
    /argument/,
  ],
  [
    'context arguments that are a string',
    (w) => ({
      ref: prompt('summarize'),
      argument: arg('topic', 'x'),
      context: { arguments: `{"path":"${w}/vault/"}` },
    }),
    /context/,
  ],
  // Allowed: the server answers.
  [
    'an allowed directory',
    (w) => ({ ref: prompt('explain_file'), argument: arg('path', `${w}/docs/`) }),
    'ok.txt',
  ],
  [
    'an allowed name',
    (w) => ({ ref: prompt('explain_file'), argument: arg('path', `${w}/docs/o`) }),
    'ok.txt',
  ],
  ['text', () => ({ ref: prompt('summarize'), argument: arg('topic', 'the wea') }), ''],
  [
    'an allowed template',
    (w) => ({ ref: template('file:///{+path}'), argument: arg('path', `${rel(w)}/docs/o`) }),
    'ok.txt',
  ],
];

void t.test('completions are checked like a prompt’s arguments, and what they list', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'docs'), { recursive: true });
  mkdirSync(join(w, 'vault'));
  mkdirSync(join(dir, 'outside'));
  mkdirSync(join(dir, `w-${MARK}-beside-the-root`));
  writeFileSync(join(w, `vault/${MARK}-denied.txt`), '');
  writeFileSync(join(dir, `outside/${MARK}-outside.txt`), '');
  writeFileSync(join(w, 'docs/ok.txt'), 'OK-TEXT');
  symlinkSync('../vault', join(w, 'docs/lnk'));
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  shapes:\n    roots:\n      - path: ${w}\n    deny:\n      - ${w}/vault\n`,
    { dir },
  );
  const s = await startProxiedShapes(t, { server: 'shapes', socket: d.socket });

  for (const [what, params, expect] of ROWS) {
    const r = await s.complete(params(w, dir));
    t.notOk(r.text.includes(MARK), `${what}: nothing there is listed`);
    if (typeof expect === 'string') {
      t.equal(r.isError, false, `${what}: goes through: ${r.text.slice(0, 200)}`);
      t.ok(r.text.includes(expect), `${what}: the server offers ${expect || 'nothing'}`);
    } else {
      t.equal(r.isError, true, `${what}: an error`);
      t.match(r.text, /mcp-roots-proxy refused completing/, `${what}: refused by the proxy`);
      t.match(r.text, expect, `${what}: ${r.text.slice(0, 300)}`);
    }
  }
  t.comment(`${ROWS.length} completions`);

  // Spellings a loose reader (Go's encoding/json, a Python model) takes for the members checked.
  const LOOSE: [string, Record<string, unknown>][] = [
    ['Argument', { ref: prompt('explain_file'), Argument: arg('path', `${w}/vault/`) }],
    ['Value', { ref: prompt('explain_file'), argument: { name: 'path', Value: `${w}/vault/` } }],
    [
      'URI',
      { ref: { type: 'ref/resource', URI: `file://${w}/vault/{x}` }, argument: arg('x', '') },
    ],
    [
      'Arguments in the context',
      {
        ref: prompt('summarize'),
        argument: arg('topic', 'x'),
        context: { Arguments: { path: `${w}/vault/` } },
      },
    ],
  ];
  for (const [what, params] of LOOSE) {
    const r = await s.complete(params);
    t.notOk(r.text.includes(MARK), `${what}: nothing there is listed`);
    t.match(
      r.text,
      /not passed to the server: the key/,
      `${what}: refused: ${r.text.slice(0, 200)}`,
    );
  }
});
