/**
 * Completions naming the denied directory in other spellings: `file:` with one slash or in
 * capitals, a leading space or tab, a template whose scheme is in capitals or has no slashes,
 * an argument value in a `file:` URI with percent-encoding, and a value given twice (in the
 * argument and in the context under the same name).
 *
 * (Attacks that held when written: every row passes.)
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
const prompt = (name: string) => ({ type: 'ref/prompt', name });
const template = (uri: string) => ({ type: 'ref/resource', uri });
const arg = (name: string, value: string) => ({ name, value });

void t.test('other spellings of a denied directory in a completion', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'docs'), { recursive: true });
  mkdirSync(join(w, 'vault'));
  writeFileSync(join(w, `vault/${MARK}-denied.txt`), '');
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  shapes:\n    roots:\n      - path: ${w}\n    deny:\n      - ${w}/vault\n`,
    { dir },
  );
  const s = await startProxiedShapes(t, { server: 'shapes', socket: d.socket });
  const rows: [string, Record<string, unknown>][] = [
    [
      'file: with one slash',
      { ref: prompt('summarize'), argument: arg('topic', `file:${w}/vault/`) },
    ],
    [
      'FILE: in capitals',
      { ref: prompt('summarize'), argument: arg('topic', `FILE://${w}/vault/`) },
    ],
    ['a leading tab', { ref: prompt('explain_file'), argument: arg('path', `\t${w}/vault/`) }],
    [
      'percent-encoded',
      { ref: prompt('summarize'), argument: arg('topic', `file://${w}/v%61ult/`) },
    ],
    ['a template in capitals', { ref: template(`FILE://${w}/{+p}`), argument: arg('p', 'vault/') }],
    [
      'a template without slashes',
      { ref: template(`file:${w}/{+p}`), argument: arg('p', 'vault/') },
    ],
    [
      'a template with a literal %61',
      { ref: template(`file://${w}/v%61ult/{p}`), argument: arg('p', '') },
    ],
    [
      'the same name in argument and context',
      {
        ref: template(`file://${w}/{+p}`),
        argument: arg('p', 'docs/'),
        context: { arguments: { p: 'vault/' } },
      },
    ],
  ];
  for (const [what, params] of rows) {
    const r = await s.complete(params);
    t.notOk(r.text.includes(MARK), `${what}: nothing there is listed: ${r.text.slice(0, 200)}`);
  }
});
