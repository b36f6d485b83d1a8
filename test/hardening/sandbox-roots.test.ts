/**
 * A root put behind a link after the daemon listed it. The daemon lists each root by its
 * canonical path, but bubblewrap binds a source by following links: a link put in a root's place,
 * or in an ancestor's, between the daemon's look and the server's (re)start, would show the
 * server what the link leads to, at the root's path and with the root's access. An agent that can
 * make links inside a writable root can time this: a new directory under a glob restarts the
 * server, while the daemon's full look that drops the root waits for its gap.
 */
import { mkdirSync, realpathSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t from 'tap';
import type { Root } from '../../common/types.js';
import { sandboxMounts } from '../../proxy/sandbox-mounts.js';
import { shortDir } from '../helpers/short-dir.js';

/** How a root listed as `path` is changed before the server starts. */
const CASES: [string, (path: string, secret: string) => void, boolean][] = [
  ['left alone', () => {}, true],
  [
    'replaced by a link to a secret directory',
    (p, s) => {
      rmSync(p, { recursive: true });
      symlinkSync(s, p);
    },
    false,
  ],
  [
    'its parent replaced by a link to a look-alike tree',
    (p, s) => {
      const parent = join(p, '..');
      renameSync(parent, `${parent}-moved`);
      mkdirSync(join(s, 'r'), { recursive: true });
      symlinkSync(s, parent);
    },
    false,
  ],
  ['removed', (p) => rmSync(p, { recursive: true }), false],
];

for (const [i, [what, change, mounted]] of CASES.entries()) {
  void t.test(`a root ${what}`, async (t) => {
    const dir = realpathSync(shortDir());
    const secret = join(dir, 'secret');
    mkdirSync(secret);
    writeFileSync(join(secret, 'key'), 'MARK-FORBIDDEN');
    const root = join(dir, `w${i}`, 'r');
    mkdirSync(root, { recursive: true });
    const listed: Root = {
      uri: pathToFileURL(root).href,
      _meta: { 'mcp-roots/readOnly': false },
    };
    change(root, secret);
    const m = await sandboxMounts({
      roots: [listed],
      rule: { read: [], write: [], network: false },
      launch: { command: process.execPath, args: [], env: [] },
      program: { env: process.env, cwd: dir, home: dir },
      disableUserns: false,
    });
    t.equal(
      m.roots.some((r) => r.path === root),
      mounted,
      mounted ? 'mounted' : 'not mounted: bwrap would follow the link',
    );
  });
}
