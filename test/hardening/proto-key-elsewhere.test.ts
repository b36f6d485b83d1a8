/**
 * An argument named `__proto__` in a `tools/call` and a `prompts/get`: the value must be checked as
 * any other's (the completion gate once dropped it, test/hardening/completion-proto-key.test.ts).
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

void t.test('an argument named __proto__ is checked in calls and prompts', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  mkdirSync(join(w, 'vault'), { recursive: true });
  writeFileSync(join(w, 'vault/key.txt'), 'SECRET-TEXT');
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  shapes:\n    roots:\n      - path: ${w}\n    deny:\n      - ${w}/vault\n`,
    { dir },
  );
  const s = await startProxiedShapes(t, { server: 'shapes', socket: d.socket });
  const key = JSON.stringify(`${w}/vault/key.txt`);
  const args = JSON.parse(`{"__proto__":${key}}`) as Record<string, string>;
  const call = await s.call('read_uri', args);
  t.match(call.text, /mcp-roots-proxy refused/, `tools/call: refused: ${call.text.slice(0, 200)}`);
  const p = await s.prompt('summarize', args);
  t.match(p.text, /mcp-roots-proxy refused/, `prompts/get: refused: ${p.text.slice(0, 200)}`);
});
