/**
 * An include glob whose text exists literally is read as that one file (policies/load.ts
 * `existsLiterally`: a file may be named `[ab].yaml`). An agent that could make that name in the
 * glob's directory would swap every file the glob matches, and every deny they hold, for a file
 * of its own. Through the enforcing proxy with the real filesystem server, with the include
 * directory inside the agent's writable root, each glob's literal name (and, for a glob in a
 * directory segment, that directory) is refused to `write_file`, `create_directory` and
 * `move_file`, nothing is made, and the denies the matched files hold keep holding.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, startProxiedFs, waitFor } from '../helpers/proxy.js';

/** [include glob under w/, the file it matches, the literal paths the agent tries to make] */
const ROWS: [string, string, string[]][] = [
  ['p1/[ab].yaml', 'p1/a.yaml', ['p1/[ab].yaml']],
  ['p2/{a,c}.yaml', 'p2/a.yaml', ['p2/{a,c}.yaml']],
  ['p3/?.yaml', 'p3/a.yaml', ['p3/?.yaml']],
  ['p4/*.yaml', 'p4/a.yaml', ['p4/*.yaml']],
  ['p5/**/*.yaml', 'p5/x/a.yaml', ['p5/**/*.yaml', 'p5/**']],
  ['p6*/x.yaml', 'p6a/x.yaml', ['p6*/x.yaml', 'p6*']],
];

void t.test('an include glob\u2019s literal name cannot be made by the agent', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'stage'), { recursive: true });
  writeFileSync(join(w, 'stage', 'mine.yaml'), 'version: 1\n');
  const secrets = ROWS.map((_, i) => join(w, `secret${i}`));
  ROWS.forEach(([, file], i) => {
    mkdirSync(join(w, file, '..'), { recursive: true });
    writeFileSync(join(w, file), `version: 1\ndeny:\n  - ${secrets[i]}\n`);
    writeFileSync(secrets[i]!, `SECRET-${i}`);
  });
  const policy = [
    'version: 1',
    'include:',
    ...ROWS.map(([glob]) => `  - "${join(w, glob)}"`),
    'servers:',
    '  g:',
    '    roots:',
    `      - path: ${w}`,
    '',
  ].join('\n');
  const d = await startDaemon(t, policy, { dir });
  const fs = await startProxiedFs(t, { server: 'g', socket: d.socket });
  await waitFor(async () => (await fs.allowed()).length > 0, 30_000, 'the first list');
  for (const [glob, , literals] of ROWS) {
    for (const rel of literals) {
      const path = join(w, rel);
      const attempts: [string, Record<string, unknown>][] = [
        ['write_file', { path, content: 'version: 1\n' }],
        ['create_directory', { path }],
        ['move_file', { source: join(w, 'stage', 'mine.yaml'), destination: path }],
      ];
      for (const [tool, args] of attempts) {
        const r = await fs.call(tool, args);
        t.ok(r.isError, `${glob}: ${tool} of ${rel} is refused`);
        t.notOk(existsSync(path), `${glob}: ${rel} was not made`);
      }
    }
  }
  const c = await d.connect();
  t.same((await c.status()).policy.errors, [], 'the policy still loads');
  for (const [i, [glob]] of ROWS.entries()) {
    const r = await fs.call('read_text_file', { path: secrets[i] });
    t.ok(r.isError, `${glob}: the deny of a matched file holds`);
    t.notMatch(r.text, /SECRET/, `${glob}: nothing of the secret is shown`);
  }
});
