/**
 * Access decisions by binary search in a view's sorted roots (policies/sorted-roots.ts), through
 * the real daemon: the view is sorted by the engine's own string sort when no path has an astral
 * character and by UTF-8 order when one has (server-view.ts), and new glob matches are inserted
 * one by one (view-update.ts). Read-only roots are named to straddle every ordering: siblings
 * that share a prefix and differ by a character below `/` (space, `!`, `-`, `.`) or above it, a
 * private-use character (U+E000, above every surrogate in UTF-16, below them in UTF-8), U+FFFD,
 * an astral character, and nesting. Each is made at the start and again, under a glob, after it.
 * Every decision must be the one the longest root holding the path (by whole segments) gives.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';

const NAMES = ['b', 'b c', 'b!', 'b-c', 'b.c', 'b0', 'bb', '\uE000', '\uFFFD', '\u{1F600}', 'é'];
/** Read-only roots (below the writable `top`), nested ones among them. */
const READ_ONLY = ['b', 'b-c', 'b.c', '\uE000', '\u{1F600}', 'b c/x', 'bb/x/y', '\uFFFD/\u{1F600}'];

void t.test('decisions by binary search agree with whole-segment containment', async (t) => {
  const td = await startDaemon(t, undefined);
  const w = realpathSync(td.dir);
  const top = join(w, 'top');
  const late = join(w, 'late');
  for (const n of NAMES)
    for (const base of [top, late]) mkdirSync(join(base, n, 'x', 'y'), { recursive: true });
  for (const r of READ_ONLY) mkdirSync(join(top, r), { recursive: true });
  const ro = READ_ONLY.map(
    (r) => `      - path: ${JSON.stringify(join(top, r))}\n        readOnly: true\n`,
  );
  td.writePolicy(
    `version: 1\nservers:\n  s:\n    roots:\n      - path: ${top}\n${ro.join('')}      - path: ${late}\n      - path: ${late}/*\n        readOnly: true\n`,
  );
  const c = await td.connect();
  await waitFor(async () => (await c.listRoots('s')).roots.length > 0, 30_000, 'first list');
  // After the start: glob matches inserted one by one, astral ones among them.
  for (const n of ['a', 'b-', 'b/', '\uE001', '\u{1F601}', '\u{10FFFD}'].filter(
    (n) => !n.includes('/'),
  ))
    mkdirSync(join(late, n, 'x'), { recursive: true });
  await waitFor(
    async () => (await c.listRoots('s')).roots.some((r) => r.uri.endsWith('%F4%8F%BF%BD')),
    30_000,
    'the late matches listed',
  );
  const readOnlyRoots = [...READ_ONLY.map((r) => join(top, r))];
  const lateNames = [...NAMES, 'a', 'b-', '\uE001', '\u{1F601}', '\u{10FFFD}'];
  const rows: [string, boolean][] = [];
  for (const n of NAMES) {
    for (const rel of [
      n,
      `${n}/x`,
      `${n}/x/y`,
      `${n}/x/y/new.txt`,
      `${n}/new.txt`,
      `${n}x/new.txt`,
    ]) {
      const p = join(top, rel);
      const holder = readOnlyRoots.some((r) => p === r || p.startsWith(`${r}/`));
      rows.push([p, !holder]);
    }
  }
  for (const n of lateNames) {
    for (const rel of [n, `${n}/x`, `${n}/x/new.txt`]) rows.push([join(late, rel), false]);
    rows.push([join(late, `${n}.new`), true]);
  }
  const wrong: string[] = [];
  for (const [p, writable] of rows) {
    const r = await c.check('s', p, 'write');
    // A directory holding a read-only root may not be written as a whole (moved, renamed).
    const holdsReadOnly = readOnlyRoots.some((root) => root.startsWith(`${p}/`));
    const want = writable && !holdsReadOnly;
    if (r.allowed !== want)
      wrong.push(`${JSON.stringify(p)}: ${r.allowed ? 'allowed' : 'refused'} (${r.reason})`);
    const read = await c.check('s', p, 'read');
    if (!read.allowed) wrong.push(`${JSON.stringify(p)}: read refused (${read.reason})`);
  }
  t.same(wrong, [], `${rows.length} paths, written and read`);
});
