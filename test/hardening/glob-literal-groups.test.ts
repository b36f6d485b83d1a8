/**
 * Parentheses and bars are characters of a name in a policy's globs, not picomatch's regular-
 * expression groups and alternation; so are an unclosed `[` or `{` and braces without a comma
 * (`Notes {old}`), which picomatch's scan took for no glob at all, the whole pattern for a path. They were not escaped, so a deny or a read-only glob
 * written under a folder such as Dropbox's `Dropbox (Personal)` matched nothing at all and the
 * file it named was read or written, through the proxy's checks and inside the sandbox alike;
 * `rootsctl validate` called the policy valid. Every glob of the policy is now compiled through
 * common/glob-dialect.ts.
 *
 * Real daemon, real proxy, the real filesystem server; then the hostile fixture server under
 * bubblewrap for what the kernel enforces.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { startBoxedHostile } from '../helpers/proxied-server.js';
import { ownedShortDir, startProxiedFs, waitFor } from '../helpers/proxy.js';

const MARK = 'MARK-literal-groups';
const DROPBOX = 'Dropbox (Personal)';
/** A brace pair without a comma: no brace group, as in a shell. */
const NOTES = 'Notes {old}';

/** Paths (below the workspace) each deny of the policy names, with what names it. */
const DENIED: [string, string][] = [
  ['a deny glob under Dropbox (Personal)', `${DROPBOX}/Finance/bank.key`],
  ['a deny glob under a|b', 'a|b/inner/f.txt'],
  ['a deny glob under x(y (an unbalanced parenthesis)', 'x(y/z/f.txt'],
  ['a **/ deny named Projects (old)', 'p/Projects (old)/f.txt'],
  ['a deny glob under Notes {old} (braces without a comma)', `${NOTES}/Finance/bank.key`],
  ['a one-level deny glob under Notes {old}', `${NOTES}/top.key`],
  ['a **/ deny under a{b (an unclosed brace)', 'a{b/Finance/bank.key'],
  ['a deny glob under Project [draft (an unclosed bracket)', 'Project [draft/Private/diary.txt'],
  ['a deny glob under Tax [2024] (a bracket read both ways)', 'Tax [2024]/t.key'],
];
/** Files in a read-only glob's matches. */
const READ_ONLY = [`${DROPBOX}/Shared/vendor/lib.js`, `${NOTES}/Shared/vendor/lib.js`];

/** The tree and policy both parts use: denies and a read-only glob under names with ( ) and |. */
function workspace(dir: string, server: string, extra = ''): { w: string; policy: string } {
  const w = join(dir, 'w');
  for (const d of [
    `${DROPBOX}/Finance`,
    `${DROPBOX}/Shared/vendor`,
    'a|b/inner',
    'p/Projects (old)',
    'p/now',
    'x(y/z',
    `${NOTES}/Finance`,
    `${NOTES}/Shared/vendor`,
    'a{b/Finance',
    'Project [draft/Private',
    'Tax [2024]',
  ])
    mkdirSync(join(w, d), { recursive: true });
  for (const [, path] of DENIED) writeFileSync(join(w, path), MARK);
  for (const path of READ_ONLY) writeFileSync(join(w, path), MARK);
  writeFileSync(join(w, DROPBOX, 'Finance/plain.txt'), 'plain');
  writeFileSync(join(w, 'p/now/f.txt'), 'now');
  const policy = [
    'version: 1',
    'deny:',
    '  - "**/Projects (old)"',
    `  - "${w}/a|b/*"`,
    `  - "${w}/x(y/*"`,
    `  - "${w}/${NOTES}/*.key"`,
    `  - "${w}/${NOTES}/**/*.key"`,
    '  - "**/a{b/Finance/*.key"',
    `  - "${w}/Project [draft/Priv*/**"`,
    `  - "${w}/Tax [2024]/*.key"`,
    'servers:',
    `  ${server}:`,
    '    roots:',
    `      - path: "${w}/${DROPBOX}"`,
    `      - {path: "${w}/${DROPBOX}/Shared/*", readOnly: true}`,
    `      - path: "${w}/a|b"`,
    `      - path: "${w}/p"`,
    `      - path: "${w}/x(y"`,
    `      - path: "${w}/${NOTES}"`,
    `      - {path: "${w}/${NOTES}/Shared/*", readOnly: true}`,
    `      - path: "${w}/a{b"`,
    `      - path: "${w}/Project [draft"`,
    `      - path: "${w}/Tax [2024]"`,
    '    deny:',
    `      - "${w}/${DROPBOX}/**/*.key"`,
    extra,
  ].join('\n');
  return { w, policy: `${policy}\n` };
}

void t.test('through the proxy: denies and read-only globs under ( ) and | hold', async (t) => {
  const dir = ownedShortDir(t);
  const { w, policy } = workspace(dir, 'fs');
  const d = await startDaemon(t, policy, { dir });
  const fs = await startProxiedFs(t, { server: 'fs', socket: d.socket });
  const roots = [
    DROPBOX,
    `${DROPBOX}/Shared/vendor`,
    'a|b',
    'p',
    'x(y',
    NOTES,
    `${NOTES}/Shared/vendor`,
    'a{b',
    'Project [draft',
    'Tax [2024]',
  ].map((p) => join(w, p));
  await waitFor(async () => (await fs.allowed()).includes(join(w, 'p')), 30_000, 'the roots');
  t.same((await fs.allowed()).sort(), roots.sort(), 'roots with ( ) or | are given as named');

  for (const [what, path] of DENIED) {
    const read = await fs.call('read_text_file', { path: join(w, path) });
    t.notMatch(read.text, MARK, `${what}: not read`);
    t.equal(read.isError, true, `${what}: refused: ${read.text}`);
  }
  t.same(
    await fs.call('read_text_file', { path: join(w, DROPBOX, 'Finance/plain.txt') }),
    { text: 'plain', isError: false },
    'the rest of the root reads',
  );
  t.same(
    await fs.call('read_text_file', { path: join(w, 'p/now/f.txt') }),
    { text: 'now', isError: false },
    'a neighbour of the denied folder reads',
  );
  for (const path of READ_ONLY) {
    const wrote = await fs.call('write_file', { path: join(w, path), content: 'replaced' });
    t.equal(wrote.isError, true, `${path}, a read-only glob's match: refused: ${wrote.text}`);
    t.equal(readFileSync(join(w, path), 'utf8'), MARK, `${path}: unchanged`);
  }
});

void t.test(
  'under the sandbox: the same denies hide the files from the server itself',
  async (t) => {
    const dir = ownedShortDir(t);
    const { w, policy } = workspace(dir, 'h', '    sandbox: true');
    const d = await startDaemon(t, policy, { dir });
    const { attempt } = await startBoxedHostile(t, d.socket);
    t.match(
      (await attempt('read', join(w, DROPBOX, 'Finance/plain.txt'))).text,
      /^ok: plain/,
      'the root is readable in the sandbox',
    );
    for (const [what, path] of DENIED) {
      const read = await attempt('read', join(w, path));
      t.notMatch(read.text, MARK, `${what}: not read by the sandboxed server: ${read.text}`);
    }
    for (const path of READ_ONLY) {
      const wrote = await attempt('write', join(w, path));
      t.match(
        wrote.text,
        /^EROFS|^EACCES|^ENOENT/,
        `${path}, a read-only glob's match: ${wrote.text}`,
      );
      t.equal(readFileSync(join(w, path), 'utf8'), MARK, `${path}: unchanged`);
    }
    t.notOk(existsSync(join(w, 'x(y/z/new')), 'nothing made');
  },
);
