/**
 * `limitFs` (the cap on one resolution's calls in flight): at most `max` run at once, the rest
 * start in the order they were asked, and a call that fails (by rejecting, or by throwing before
 * it made its promise) gives its slot back, so a long queue drains whatever its calls do.
 */
import t from 'tap';
import { limitFs } from '../../policies/fs.js';
import type { FsView } from '../../policies/model.js';

/** A view whose `realpath` calls wait until the test settles them, one by one. */
function heldFs() {
  const started: string[] = [];
  const pending: { path: string; settle: (ok: boolean) => void }[] = [];
  let running = 0;
  let most = 0;
  const fail = (): Promise<never> => Promise.reject(new Error('not used'));
  const fs: FsView = {
    stat: fail,
    lstat: fail,
    readdir: fail,
    readFile: fail,
    access: (p) => {
      // Throws before any promise exists: the limiter must still give the slot back.
      throw new Error(`sync failure for ${p}`);
    },
    realpath: (p) => {
      started.push(p);
      running++;
      most = Math.max(most, running);
      return new Promise<string>((resolve, reject) => {
        pending.push({
          path: p,
          settle: (ok) => {
            running--;
            if (ok) resolve(`real:${p}`);
            else reject(new Error(`failed: ${p}`));
          },
        });
      });
    },
  };
  return { fs, started, pending, most: () => most };
}

const turn = () => new Promise((r) => setImmediate(r));

void t.test(
  'at most max calls run, the rest start in order, failures free their slot',
  async (t) => {
    const h = heldFs();
    const fs = limitFs(h.fs, 3);
    const paths = Array.from({ length: 40 }, (_, i) => `/p${i}`);
    const answers = paths.map((p) =>
      fs.realpath(p).then(
        (v) => v,
        (e: Error) => e.message,
      ),
    );
    await turn();
    t.same(h.started, ['/p0', '/p1', '/p2'], 'only three start at once');
    // Settle in turns, every third one failing, until the queue is drained.
    let k = 0;
    while (h.pending.length > 0) {
      const next = h.pending.shift()!;
      next.settle(k++ % 3 !== 0);
      await turn();
    }
    t.same(h.started, paths, 'every call started, in the order asked');
    t.equal(h.most(), 3, 'never more than three in flight');
    const got = await Promise.all(answers);
    t.same(
      got,
      paths.map((p, i) => (i % 3 === 0 ? `failed: ${p}` : `real:${p}`)),
      'each caller gets its own answer or error',
    );
  },
);

void t.test('a call that throws before its promise rejects and frees its slot', async (t) => {
  const h = heldFs();
  const fs = limitFs(h.fs, 1);
  const errors = await Promise.all(
    [1, 2, 3].map((i) =>
      fs.access(`/a${i}`, 4).then(
        () => 'passed',
        (e: Error) => e.message,
      ),
    ),
  );
  t.same(errors, ['sync failure for /a1', 'sync failure for /a2', 'sync failure for /a3']);
  const later = fs.realpath('/after');
  await turn();
  t.same(h.started, ['/after'], 'the slot is free for the next call');
  h.pending.shift()!.settle(true);
  t.equal(await later, 'real:/after');
});
