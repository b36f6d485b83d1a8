/**
 * A path the proxy refuses by itself, for its form (a `..` segment, a relative path), before
 * any check by the daemon, is in the decision log all the same (`log/refused`): a user pass
 * found an agent's `../../.ssh` missing from `rootsctl log`, which says what was refused.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, real, startProxiedFs, waitFor } from '../helpers/proxy.js';

/** The decision log's `check` entries so far. */
function checks(stateDir: string): Record<string, unknown>[] {
  const file = join(stateDir, 'decisions.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((e) => e.kind === 'check');
}

void t.test("the proxy's own refusals are in the decision log", async (t) => {
  const dir = ownedShortDir(t);
  const root = join(real(dir), 'proj');
  mkdirSync(root);
  writeFileSync(join(root, 'README'), 'hi\n');
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${root}\n`,
    {
      dir,
    },
  );
  const fs = await startProxiedFs(t, { server: 'fs', socket: d.socket });
  const dotdot = `${root}/../../.ssh/id_ed25519`;
  t.ok((await fs.call('read_text_file', { path: dotdot })).isError, 'a .. path is refused');
  t.ok((await fs.call('read_text_file', { path: 'proj/README' })).isError, 'a relative one too');
  // A lone surrogate names no file: recorded with U+FFFD in its place.
  t.ok((await fs.call('read_text_file', { path: 'a\ud800b' })).isError, 'and a lone surrogate');
  const entries = () => checks(d.stateDir);
  await waitFor(() => entries().length >= 3, 30_000, 'the three entries');
  t.match(
    entries(),
    [
      {
        kind: 'check',
        server: 'fs',
        path: dotdot,
        allowed: false,
        reason: /^refused by mcp-roots-proxy: .*\.\./,
        tool: 'read_text_file',
      },
      { kind: 'check', path: 'proj/README', allowed: false, reason: /relative path/ },
      { kind: 'check', path: 'a\ufffdb', allowed: false },
    ],
    'each with the path as given, why, and the tool',
  );
});

// The caller chose how long a refusal's reason was (a path with a lone surrogate quoted whole,
// an argument's member names), and a reason past what the daemon takes left the refusal out of
// the log (an attacker pass): each is cut to fit.
void t.test('a refusal with a reason of any length is in the decision log', async (t) => {
  const dir = ownedShortDir(t);
  const root = join(real(dir), 'proj');
  mkdirSync(root);
  writeFileSync(join(root, 'README'), 'hi\n');
  const policy = `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${root}\n`;
  const d = await startDaemon(t, policy, { dir });
  const fs = await startProxiedFs(t, { server: 'fs', socket: d.socket });
  const long = `${root}/../../.ssh/id_ed25519?${'A'.repeat(5000)}\ud800`;
  t.ok((await fs.call('read_text_file', { path: long })).isError, 'a long path is refused');
  const key = `${'k'.repeat(4200)}-x`;
  const keyed = { path: join(root, 'README'), [key]: `${root}/../../etc/shadow` };
  t.ok((await fs.call('read_text_file', keyed)).isError, 'a path under a long name too');
  const entries = () => checks(d.stateDir);
  await waitFor(() => entries().length >= 2, 30_000, 'both entries');
  t.match(
    entries(),
    [
      { path: /\/\.\.\/\.\.\/\.ssh\/id_ed25519\?A+/, reason: /half of a UTF-16 pair/ },
      { path: /\/\.\.\/\.\.\/etc\/shadow$/, reason: /\(argument "k+…\)$/ },
    ],
    'both recorded, cut to fit',
  );
});
