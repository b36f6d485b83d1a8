/**
 * The protected paths written as `**\/NAME` (host configurations in any project: `.vscode`,
 * `.claude`, `.mcp.json`, ...; git's `.git/hooks` and `.git/config`) inside the sandbox. The
 * daemon keeps them out of each root's `_meta['mcp-roots/deny']` (every root would carry the
 * whole list), so the sandbox, which lays out what `_meta` names, left them writable in a
 * writable root and in a `sandbox.write` path: a sandboxed server's own system calls wrote a git
 * hook, a `.mcp.json` or a `.vscode/tasks.json` that runs as the person outside the sandbox. They
 * are read-only there now, those present at the start and those that appear later (the server
 * is restarted with them read-only). So are a bare repository's `config` and `hooks` (a git
 * directory by its entries, whatever its name), present at the start.
 *
 * Real daemon, real proxy under bubblewrap, the hostile fixture server with enforcement off (only
 * the sandbox stands in its way).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { startBoxedHostile, type Attempt } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

const KEEP = 'the person wrote this';

/** The write of `path` once the restarted server answers (calls fail while it starts). */
async function writeOnceBack(attempt: Attempt, path: string): Promise<string> {
  let wrote = '';
  await waitFor(
    async () => {
      wrote = (await attempt('write', path).catch(() => ({ text: '' }))).text;
      return wrote !== '';
    },
    30_000,
    'the restarted server answers',
  );
  return wrote;
}

void t.test('built-in **/NAME protected paths are read-only in the sandbox', async (t) => {
  const dir = ownedShortDir(t);
  const r = join(dir, 'r');
  const x = join(dir, 'x');
  for (const d of [
    'r/.git/hooks',
    'r/.git/modules/sub/hooks',
    'r/.git/worktrees/w1',
    'r/sub',
    'r/.vscode',
    'r/sub/.claude',
    'x/.cursor',
    'x/p/.git/objects',
    // Bare repositories: git directories by their entries, not by the name `.git`.
    'r/tools.git/objects',
    'r/tools.git/hooks',
    'x/mirror/refs',
  ]) {
    mkdirSync(join(dir, d), { recursive: true });
  }
  // Files present at the start, each of which a host or git runs code from.
  const present = [
    'r/.git/config',
    'r/.git/hooks/pre-commit',
    'r/.git/modules/sub/config',
    'r/.git/modules/sub/hooks/pre-commit',
    'r/.git/worktrees/w1/commondir',
    'r/sub/.git',
    'x/p/.git/config',
    'r/.vscode/tasks.json',
    'r/.mcp.json',
    'r/sub/.claude/settings.json',
    'x/.cursor/mcp.json',
    'x/p/.mcp.json',
    'r/tools.git/config',
    'r/tools.git/hooks/pre-commit',
    'x/mirror/config',
  ].map((p) => join(dir, p));
  for (const p of present) writeFileSync(p, KEEP);
  for (const bare of ['r/tools.git', 'x/mirror'])
    writeFileSync(join(dir, bare, 'HEAD'), 'ref: refs/heads/main\n');
  const policy =
    `version: 1\nservers:\n  h:\n    roots:\n      - path: ${r}\n` +
    `    sandbox:\n      write: [${x}]\n`;
  const d = await startDaemon(t, policy, { dir });
  const { boxed, attempt } = await startBoxedHostile(t, d.socket);

  // The controls: the root and the extra path are writable.
  t.match((await attempt('write', join(r, 'ok.txt'))).text, /^ok/, 'the root is writable');
  t.match((await attempt('write', join(x, 'ok.txt'))).text, /^ok/, 'the write path is writable');

  for (const p of present) {
    const wrote = await attempt('write', p);
    t.match(wrote.text, /^EROFS/, `${p.slice(dir.length)}: read-only (${wrote.text})`);
    t.equal(readFileSync(p, 'utf8'), KEEP, `${p.slice(dir.length)}: unchanged`);
  }
  // A .git directory is the repository: git writes it (only what runs code is read-only).
  t.match(
    (await attempt('write', join(x, 'p/.git/objects/ab'))).text,
    /^ok/,
    'a .git directory stays writable',
  );
  for (const [what, path] of [
    ['a new hook', join(r, '.git/hooks/post-checkout')],
    ['a new file in .vscode', join(r, '.vscode/settings.json')],
    ['a new file in .cursor of the write path', join(x, '.cursor/hooks.json')],
  ] as const) {
    const wrote = await attempt('write', path);
    t.match(wrote.text, /^EROFS/, `${what}: refused (${wrote.text})`);
  }
  const moved = await attempt('rename', join(r, '.vscode'), join(r, 'vscode-old'));
  t.notMatch(moved.text, /^ok/, `.vscode cannot be renamed away: ${moved.text}`);
  // Nor the folder that holds one (made again with a `.claude` of the server's, it would be
  // the person's project to the host), however far up.
  for (const holder of [join(r, 'sub'), join(x, 'p')]) {
    const away = await attempt('rename', holder, `${holder}-old`);
    t.notMatch(
      away.text,
      /^ok/,
      `${holder.slice(dir.length)} cannot be renamed away: ${away.text}`,
    );
  }
  const bareMoved = await attempt('rename', join(r, 'tools.git'), join(r, 'tools-old'));
  t.notMatch(bareMoved.text, /^ok/, `a bare repository cannot be renamed away: ${bareMoved.text}`);
  t.match(
    (await attempt('write', join(r, 'tools.git/objects/ab'))).text,
    /^ok/,
    'a bare repository stays writable but for its code',
  );

  // One that appears after the start: the server is restarted with it read-only.
  mkdirSync(join(r, 'later/.vscode'), { recursive: true });
  writeFileSync(join(r, 'later/.vscode/tasks.json'), KEEP);
  await waitFor(
    () => /restarting the server/.test(boxed.stderr()),
    30_000,
    'the proxy restarts the server for the new protected path',
  );
  await waitFor(
    async () =>
      (await attempt('write', join(r, 'ok.txt')).catch(() => ({ text: '' }))).text.startsWith('ok'),
    30_000,
    'the restarted server answers',
  );
  const later = await attempt('write', join(r, 'later/.vscode/tasks.json'));
  t.match(later.text, /^EROFS/, `the new .vscode is read-only: ${later.text}`);
  t.equal(readFileSync(join(r, 'later/.vscode/tasks.json'), 'utf8'), KEEP, 'and unchanged');

  // And one that appears later in the write path.
  const restarts = (): number => boxed.stderr().split('restarting the server').length - 1;
  const before = restarts();
  mkdirSync(join(x, 'q'));
  writeFileSync(join(x, 'q/.mcp.json'), KEEP);
  await waitFor(
    () => restarts() > before,
    30_000,
    'the proxy restarts the server for the new protected file in the write path',
  );
  const wrote = await writeOnceBack(attempt, join(x, 'q/.mcp.json'));
  t.match(wrote, /^EROFS/, `the new .mcp.json in the write path is read-only: ${wrote}`);
  t.equal(readFileSync(join(x, 'q/.mcp.json'), 'utf8'), KEEP, 'and unchanged');
});

void t.test(
  "a bare repository's code stays read-only when its HEAD is renamed away before a restart",
  async (t) => {
    // Found by an attacker pass: the next layout found no git directory there (no HEAD) and left
    // its config writable; HEAD renamed back, git ran what the server wrote. The layout now
    // takes the person's git directories from the watch's notes, whatever their shape now.
    const dir = ownedShortDir(t);
    const r = join(dir, 'r');
    for (const d of ['b.git/objects', 'b.git/refs']) mkdirSync(join(r, d), { recursive: true });
    writeFileSync(join(r, 'b.git/HEAD'), 'ref: refs/heads/main\n');
    writeFileSync(join(r, 'b.git/config'), KEEP);
    const d = await startDaemon(t, `version: 1\nservers:\n  h:\n    roots:\n      - path: ${r}\n`, {
      dir,
    });
    const { boxed, attempt } = await startBoxedHostile(t, d.socket);
    t.match((await attempt('write', join(r, 'b.git/config'))).text, /^EROFS/, 'read-only at first');
    t.match((await attempt('rename', join(r, 'b.git/HEAD'), join(r, 'b.git/HEAD.x'))).text, /^ok/);
    // A protected path made by the server restarts it with a new layout.
    const restarts = (): number => boxed.stderr().split('restarting the server').length - 1;
    await attempt('mkdir', join(r, '.vscode')).catch(() => undefined);
    await waitFor(() => restarts() > 0, 30_000, 'the restart');
    const wrote = await writeOnceBack(attempt, join(r, 'b.git/config'));
    t.match(wrote, /^EROFS/, `still read-only after the restart: ${wrote}`);
    t.equal(readFileSync(join(r, 'b.git/config'), 'utf8'), KEEP, 'and unchanged');
  },
);
