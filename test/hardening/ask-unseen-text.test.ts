/**
 * A question's text shows every character of the paths it names. An agent made a directory
 * `docs` + U+200B (zero-width space) beside the real `docs`, and the question read exactly like
 * one about the real one; bidi overrides reorder what is read, C1 controls act on terminals, a
 * no-break space passes for a space. Each is shown as its JSON escape, in the message and in
 * the choices; the grant is still of the path itself.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import t from 'tap';
import { askPerson, startAskDaemon } from '../helpers/ask-setup.js';
import { startProxiedFs, waitFor } from '../helpers/proxy.js';

type Params = ElicitRequest['params'];

/** Characters a person cannot see as themselves, and their escapes. */
const UNSEEN: [string, string][] = [
  ['\u200b', '\\u200b'], // zero-width space
  ['\u202e', '\\u202e'], // right-to-left override
  ['\u2067', '\\u2067'], // right-to-left isolate
  ['\u009b', '\\u009b'], // C1 control sequence introducer
  ['\u2028', '\\u2028'], // line separator
  ['\ufeff', '\\ufeff'], // byte order mark
  ['\u061c', '\\u061c'], // Arabic letter mark
  ['\u00a0', '\\u00a0'], // no-break space
  ['\u034f', '\\u034f'], // combining grapheme joiner: a mark that shows as nothing
  ['\ufe0f', '\\ufe0f'], // a variation selector
  ['\u{e0041}', '\\udb40\\udc41'], // a tag character
];

void t.test('every character of a path in a question is visible', async (t) => {
  const files: Record<string, string> = { 'home/h.txt': 'h' };
  UNSEEN.forEach(([c], i) => (files[`out/docs${c}${i}/f.txt`] = `text ${i}`));
  const { w, d, admin } = await startAskDaemon(
    t,
    files,
    (w) => `version: 1\nask: true\nservers:\n  fs:\n    roots:\n      - path: ${w}/home\n`,
  );
  mkdirSync(join(w, 'out', 'docs'));
  writeFileSync(join(w, 'out', 'docs', 'f.txt'), 'the real one');
  const person = askPerson<Params, ElicitResult>(() => ({
    action: 'accept',
    content: { scope: 'directory', duration: '10m', readOnly: true },
  }));
  const fs = await startProxiedFs(t, { server: 'fs', socket: d.socket, elicit: person.elicit });
  await waitFor(async () => (await fs.allowed()).join() === `${w}/home`, 30_000, 'first list');

  for (const [i, [c, escaped]] of UNSEEN.entries()) {
    const dir = `${w}/out/docs${c}${i}`;
    const r = await fs.call('read_text_file', { path: `${dir}/f.txt` });
    t.same(r, { text: `text ${i}`, isError: false }, `${escaped}: read once granted`);
    const q = person.asked.at(-1)!;
    const shown = JSON.stringify(q);
    t.notOk([...shown].includes(c), `${escaped}: nowhere raw in the question`);
    t.match(q.message, `docs${escaped}${i}/f.txt"`, `${escaped}: escaped in the message`);
    const schema = (q as { requestedSchema?: { properties: { scope?: unknown } } }).requestedSchema;
    const choices = (schema!.properties.scope as { oneOf: { title: string }[] }).oneOf;
    t.match(choices[0]!.title, `docs${escaped}${i}"`, `${escaped}: escaped in the choice`);
    const grants = (await admin.grants()).grants.map((g) => g.path);
    t.ok(grants.includes(dir), `${escaped}: the grant is of the directory itself`);
  }
  t.notOk(
    (await admin.grants()).grants.some((g) => g.path === `${w}/out/docs`),
    'the real docs was never granted',
  );
});
