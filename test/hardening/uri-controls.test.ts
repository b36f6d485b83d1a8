/**
 * A listed root's URI must name the root, whatever its name. Node's `pathToFileURL` escapes tab,
 * LF and CR, but the URL parser strips other control characters from the end of the text:
 * `g/secret\u0001` was listed as `file:///…/g/secret`, a denied sibling, which the sandbox then
 * mounted as a root (a sandboxed server saw the denied directory); `g/\u0001` was listed as the
 * glob's base. A process that may write in a glob's base can make such names. Each row makes one
 * under `g/*` (with `g/secret` denied) before the daemon starts and after: every listed URI reads
 * back to a directory the glob matched, the denied one is never listed, and the sandbox's layout
 * mounts only such directories.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { sandboxMounts } from '../../proxy/sandbox-mounts.js';
import { startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';

const NAMES = [
  'secret\u0001',
  '\u0001',
  'ok\u001f',
  'ok\u0001\u0002',
  'ok\t\u0001',
  'ok\u000b',
  'ok\u0001\n',
  'ok\u007f',
  'ok\u0001x',
];

for (const when of ['before start', 'after start'] as const) {
  void t.test(when, async (t) => {
    const td = await startDaemon(t, undefined);
    const g = join(realpathSync(td.dir), 'g');
    mkdirSync(join(g, 'secret'), { recursive: true });
    mkdirSync(join(g, 'ok'));
    const make = () => NAMES.forEach((n) => mkdirSync(join(g, n)));
    if (when === 'before start') make();
    td.writePolicy(
      `version: 1\nservers:\n  s:\n    roots:\n      - path: ${g}/*\n    deny:\n      - ${g}/secret\n`,
    );
    const c = await td.connect();
    await waitFor(async () => (await c.listRoots('s')).roots.length > 0, 30_000, 'first list');
    if (when === 'after start') make();
    const want = ['ok', ...NAMES].map((n) => join(g, n)).sort();
    let listed: string[] = [];
    await waitFor(
      async () => {
        const { roots } = await c.listRoots('s');
        listed = roots.map((r) => fileURLToPath(r.uri)).sort();
        return roots.length === want.length;
      },
      30_000,
      'every name listed',
    ).catch(() => undefined);
    t.same(listed, want, 'each URI reads back to the directory the glob matched');
    const { roots } = await c.listRoots('s');
    const m = await sandboxMounts({
      roots,
      rule: { read: [], write: [], network: false },
      launch: { command: process.execPath, args: [], env: [] },
      program: { env: process.env, cwd: g, home: g },
      disableUserns: false,
    });
    t.notOk(
      m.roots.some((r) => r.path === join(g, 'secret') || r.path === g),
      'the sandbox mounts neither the denied directory nor the base',
    );
    const check = await c.check('s', join(g, 'secret'), 'read');
    t.equal(check.allowed, false, 'the denied directory is refused');
  });
}
