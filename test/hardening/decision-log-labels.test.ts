/**
 * A refusal must be in the decision log whatever the tool is called. The proxy labels each
 * `roots/check` with the tool's name, which the agent chooses (it may call any name) and a server
 * chooses (it names its own tools); the daemon takes a label of at most 200 printable characters.
 * Each row calls a tool of an odd name with a path under a deny, through the proxy and the real
 * filesystem server: the call is refused, and the log holds one line per refusal, each one JSON
 * line naming the path, with the label the daemon could take.
 */
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { decisionLogFile } from '../../common/locations.js';
import { shortDir, startDaemon } from '../helpers/daemon.js';
import { startProxiedFs, waitFor } from '../helpers/proxy.js';

/** Row name, tool name, and whether the proxy refuses the name itself (no path is checked). */
const TOOLS: [string, string, 'checked' | 'name refused'][] = [
  ['201 characters', 'read_text_file' + 'x'.repeat(187), 'checked'],
  ['10,000 characters', 'r'.repeat(10_000), 'checked'],
  ['an astral character cut at 200', `${'a'.repeat(199)}\u{1F600}`, 'checked'],
  ['a lone surrogate', 'read\uD800', 'name refused'],
  ['U+2028 (a line break to some readers)', 'read\u2028{"allowed":true}', 'checked'],
  ['U+0085 (a C1 control)', 'read\u0085{"allowed":true}', 'name refused'],
  [
    'a line feed and a forged line',
    'read_text_file\n{"kind":"check","allowed":true}',
    'name refused',
  ],
  ['a carriage return', 'read_text_file\rok', 'name refused'],
  ['a NUL', 'read_text_file\u0000', 'name refused'],
  ['an escape sequence', '\u001b[2Jread_text_file', 'name refused'],
];

void t.test('every refusal is logged, whatever the tool is called', async (t) => {
  const d = realpathSync(shortDir());
  const w = join(d, 'w');
  mkdirSync(join(w, 'secret'), { recursive: true });
  writeFileSync(join(w, 'secret', 'key'), 'MARK-secret');
  const td = await startDaemon(
    t,
    `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${w}\n    deny:\n      - ${w}/secret\n`,
    { dir: d },
  );
  const fs = await startProxiedFs(t, { server: 'fs', socket: td.socket });
  await waitFor(async () => (await fs.allowed()).length > 0, 30_000, 'the first list');
  const log = decisionLogFile(td.stateDir);
  const lines = (): Record<string, unknown>[] => {
    try {
      return readFileSync(log, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
    } catch {
      return [];
    }
  };
  let n = 0;
  for (const [name, tool, how] of TOOLS) {
    const path = join(w, 'secret', 'key');
    const outcome = await fs.call(tool, { path }).catch((err: Error) => err);
    if (how === 'name refused') {
      t.ok(outcome instanceof Error, `${name}: the proxy refuses the call for its name`);
      continue;
    }
    if (outcome instanceof Error) throw new Error(`${name}: ${outcome.message}`);
    t.notMatch(outcome.text, /MARK-secret/, `${name}: the secret is not read`);
    const i = n++;
    // The rows' refusals are told apart by their order in the log.
    await waitFor(
      () => lines().filter((l) => l.kind === 'check' && l.allowed === false).length > i,
      15_000,
      `${name}: the refusal in the decision log`,
    );
    const refused = lines().filter((l) => l.kind === 'check' && l.allowed === false);
    const last = refused[i]!;
    t.equal(last.path, path, `${name}: the refused path is logged`);
    const label = String(last.tool);
    t.ok(label.length <= 200, `${name}: the label fits the daemon's cap`);
    // eslint-disable-next-line no-control-regex
    t.notMatch(label, /[\u0000-\u001f\u007f]/, `${name}: the label has no control character`);
  }
  t.notOk(
    lines().some((l) => l.allowed === true && String(l.path).includes('secret')),
    'no line says the secret was allowed',
  );
});
