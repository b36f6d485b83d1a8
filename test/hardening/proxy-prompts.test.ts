/**
 * `prompts/get` carries arguments too, and many servers' prompts put a file into the conversation
 * (`explain_file {path}`); hosts let the model run prompts (as slash commands), so the agent
 * chooses them as it chooses a tool's. The proxy checked `tools/call` and `resources/read` only:
 * a prompt's argument naming a denied file, or a file outside every root, reached the server,
 * whose answer held the file. The fixture server reads every argument that names a file.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { startProxiedShapes } from '../helpers/shapes-server.js';

const MARK = 'MARK-VAULT-denied';

void t.test('prompt arguments are checked like a tool call’s', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'docs'), { recursive: true });
  mkdirSync(join(w, 'vault'));
  mkdirSync(join(dir, 'outside'));
  writeFileSync(join(w, 'vault/key.txt'), MARK);
  writeFileSync(join(dir, 'outside/key.txt'), MARK);
  writeFileSync(join(w, 'docs/ok.txt'), 'OK-TEXT');
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  shapes:\n    roots:\n      - path: ${w}\n    deny:\n      - ${w}/vault\n`,
    { dir },
  );
  const s = await startProxiedShapes(t, { server: 'shapes', socket: d.socket });

  /** [what, prompt, arguments, the refusal's reason (undefined: the prompt goes through)] */
  const ROWS: [string, string, Record<string, string>, RegExp | undefined][] = [
    ['a denied file by name', 'explain_file', { path: `${w}/vault/key.txt` }, /denied/],
    ['a file outside every root', 'explain_file', { path: `${dir}/outside/key.txt` }, /outside/],
    ['a denied file by value', 'summarize', { topic: `${w}/vault/key.txt` }, /denied/],
    ['a denied file URI by value', 'summarize', { topic: `file://${w}/vault/key.txt` }, /denied/],
    ['a relative path by name', 'explain_file', { path: 'vault/key.txt' }, /relative/],
    ['an allowed file', 'explain_file', { path: `${w}/docs/ok.txt` }, undefined],
    ['text', 'summarize', { topic: 'the weather in spring' }, undefined],
  ];
  for (const [what, name, args, refusal] of ROWS) {
    const r = await s.prompt(name, args);
    t.notOk(r.text.includes(MARK), `${what}: the file does not come back`);
    if (refusal === undefined) {
      t.equal(r.isError, false, `${what}: goes through: ${r.text.slice(0, 200)}`);
      t.match(r.text, /^reached /, `${what}: reached the server`);
    } else {
      t.equal(r.isError, true, `${what}: an error`);
      t.match(r.text, /mcp-roots-proxy refused/, `${what}: refused by the proxy`);
      t.match(r.text, refusal, `${what}: ${r.text.slice(0, 300)}`);
    }
  }
  t.match((await s.prompt('explain_file', { path: `${w}/docs/ok.txt` })).text, /OK-TEXT/);
});
