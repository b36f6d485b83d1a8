/**
 * The proxy's watch for denied paths (proxy/deny-watch.ts) after a watched directory is removed,
 * moved away, or replaced by a link, and a directory is made (or moved) under its name. An
 * inotify watch follows the inode, not the name: the name was left held by a watch that was dead
 * or followed the old directory elsewhere, the new directory was never watched, and a `.env`
 * made in it later was not reported (a sandboxed server could read it until its next restart).
 * Each case runs its steps, waits until the watch is quiet, makes a denied file in every
 * directory that stands, and each must be reported. Real directories and inotify watches.
 */
import {
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { waitFor } from '../helpers/poll.js';
import { watchedRoot } from '../helpers/deny-watch.js';

/** One case: its steps (`r` the root, `o` outside it), with a quiet watch where `null` stands. */
type Step = ((r: string, o: string) => void) | null;

const CASES: [string, Step[]][] = [
  [
    'rm -r P; mkdir P',
    [(r) => rmSync(join(r, 'P'), { recursive: true }), (r) => mkdirSync(join(r, 'P'))],
  ],
  [
    'mv P X; mkdir P',
    [(r) => renameSync(join(r, 'P'), join(r, 'X')), (r) => mkdirSync(join(r, 'P'))],
  ],
  [
    'mv P out; mkdir -p P/sub',
    [
      (r, o) => renameSync(join(r, 'P'), join(o, 'P')),
      (r) => mkdirSync(join(r, 'P/sub'), { recursive: true }),
    ],
  ],
  [
    'rm -r P; mv Q P (a directory moved over a removed one)',
    [
      (r) => rmSync(join(r, 'P'), { recursive: true }),
      (r) => renameSync(join(r, 'Q'), join(r, 'P')),
    ],
  ],
  [
    'mv P X; ln -s X P; then rm P; mkdir P',
    [
      (r) => renameSync(join(r, 'P'), join(r, 'X')),
      (r) => symlinkSync('X', join(r, 'P')),
      null,
      (r) => unlinkSync(join(r, 'P')),
      (r) => mkdirSync(join(r, 'P')),
    ],
  ],
  [
    'mv P out; ln -s out P; then rm P; mv out P',
    [
      (r, o) => renameSync(join(r, 'P'), join(o, 'P')),
      (r, o) => symlinkSync(join(o, 'P'), join(r, 'P')),
      null,
      (r) => unlinkSync(join(r, 'P')),
      (r, o) => renameSync(join(o, 'P'), join(r, 'P')),
    ],
  ],
  [
    'mv P out; mv out P (out and back)',
    [
      (r, o) => renameSync(join(r, 'P'), join(o, 'P')),
      (r, o) => renameSync(join(o, 'P'), join(r, 'P')),
    ],
  ],
  [
    'the parent: rm -r D; mkdir -p D/P',
    [
      (r) => rmSync(join(r, 'D'), { recursive: true }),
      (r) => mkdirSync(join(r, 'D/P'), { recursive: true }),
    ],
  ],
  [
    'twice: rm -r P; mkdir P; rm -r P; mkdir P',
    [
      (r) => rmSync(join(r, 'P'), { recursive: true }),
      (r) => mkdirSync(join(r, 'P')),
      (r) => rmSync(join(r, 'P'), { recursive: true }),
      (r) => mkdirSync(join(r, 'P')),
    ],
  ],
];

/** Every directory under `dir` (not through links), `dir` included. */
function dirs(dir: string): string[] {
  const out = [dir];
  for (const e of readdirSync(dir, { withFileTypes: true }))
    if (e.isDirectory()) out.push(...dirs(join(dir, e.name)));
  return out;
}

for (const [name, steps] of CASES) {
  for (const pace of ['at once', 'quiet between'] as const) {
    void t.test(`${name} (${pace})`, async (t) => {
      const { r, count, quietNow } = await watchedRoot(t);
      // Outside the root, on the same filesystem (a move across filesystems is a copy).
      const o = `${r}-out`;
      mkdirSync(o);
      t.teardown(() => rmSync(o, { recursive: true, force: true }));
      for (const d of ['P/inner', 'Q/q', 'D/P']) mkdirSync(join(r, d), { recursive: true });
      // The watch is set on every directory above before the steps begin.
      await quietNow();
      for (const step of steps) {
        if (step === null || pace === 'quiet between') await quietNow();
        if (step !== null) step(r, o);
      }
      await quietNow();
      const made = dirs(r).map((d) => join(d, '.env'));
      for (const p of made) writeFileSync(p, 'secret');
      let missed: string[] = made;
      await waitFor(
        () => (missed = made.filter((p) => count(p) === 0)).length === 0,
        10_000,
        'every .env reported',
      ).catch(() => undefined);
      t.same(missed, [], 'a denied file made in any directory that stands is reported');
    });
  }
}
