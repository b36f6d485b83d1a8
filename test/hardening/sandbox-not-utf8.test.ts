/**
 * Denied entries whose names are not UTF-8 must be hidden in the sandbox too. Node reads such a
 * name with U+FFFD, under which the entry cannot be found, nor named to bwrap: a Latin-1 `café`
 * directory from an old archive holding `.env`, or a `clé.pem` under a `**\/*.pem` deny, was
 * left visible. Each row plants files in a root with pattern denies and lays out the sandbox:
 * what a deny matches is hidden (or its nearest ancestor that can be named), or the sandbox is
 * not laid out at all, with an error naming the entry.
 */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import type { Root } from '../../common/types.js';
import { sandboxMounts } from '../../proxy/sandbox-mounts.js';
import { shortDir } from '../helpers/daemon.js';

/** `rel` below `dir`, with `\xE9` in it as the single byte 0xE9 (Latin-1 `é`, not UTF-8). */
const bytes = (dir: string, rel: string): Buffer =>
  Buffer.concat(
    rel
      .split('\xE9')
      .flatMap((part, i) => [
        ...(i ? [Buffer.from([0xe9])] : []),
        Buffer.from(i ? part : `${dir}/${part}`),
      ]),
  );

const writeAt = (dir: string, rel: string): void => {
  const parts = rel.split('/');
  for (let n = 1; n < parts.length; n++)
    mkdirSync(bytes(dir, parts.slice(0, n).join('/')), { recursive: true });
  writeFileSync(bytes(dir, rel), 'MARK-secret');
};

/** Files to plant below the root, and the hidden paths (below the root, U+FFFD for the byte) or an error. */
const ROWS: [string, string[], string[] | RegExp][] = [
  ['a UTF-8 control: .env in a plain directory', ['proj/.env'], ['proj/.env']],
  ['.env in a Latin-1 directory', ['proj/caf\xE9/.env'], ['proj']],
  ['.env two levels below a Latin-1 directory', ['proj/caf\xE9/a/b/.env'], ['proj']],
  ['a Latin-1 .pem file', ['keys/cl\xE9.pem'], ['keys']],
  ['a Latin-1 directory holding nothing denied', ['proj/caf\xE9/notes.txt'], []],
  ['a Latin-1 directory right in the root holding .env', ['caf\xE9/.env'], /not UTF-8.*rename it/],
  ['a Latin-1 .pem right in the root', ['cl\xE9.pem'], /not UTF-8.*rename it/],
  [
    'a Latin-1 directory beside a real U+FFFD one, .env in the Latin-1 one',
    ['proj/caf\uFFFD/ok.txt', 'proj/caf\xE9/.env'],
    ['proj'],
  ],
];

for (const [what, files, want] of ROWS) {
  void t.test(what, async (t) => {
    const root = join(realpathSync(shortDir()), 'r');
    mkdirSync(root);
    for (const f of files) writeAt(root, f);
    const listed: Root = {
      uri: pathToFileURL(root).href,
      _meta: {
        'mcp-roots/readOnly': false,
        'mcp-roots/deny': [
          { pattern: '**/.env', access: 'all' },
          { pattern: '**/*.pem', access: 'all' },
        ],
      },
    };
    const laidOut = sandboxMounts({
      roots: [listed],
      rule: { read: [], write: [], network: false },
      launch: { command: process.execPath, args: [], env: [] },
      program: { env: process.env, cwd: root, home: root },
      disableUserns: false,
    });
    if (want instanceof RegExp) {
      await t.rejects(laidOut, want, 'not laid out');
      return;
    }
    const m = await laidOut;
    t.same(m.hidden.map((h) => h.path.slice(root.length + 1)).sort(), [...want].sort(), 'hidden');
  });
}
