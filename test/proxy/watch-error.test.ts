/**
 * A watch of a sandboxed server's roots that fails (Node closes an `fs.watch` that reports an
 * error). The watch for denied paths (proxy/deny-watch.ts) dropped it without a word, so a
 * denied file made there later was never reported, and the server could read it; the include
 * bases' watch (proxy/include-watch.ts) closed it the same way. Both now fail closed, as for a
 * flood: a report that stops the server, and the next plan sets every watch afresh.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { watchedRoot } from '../helpers/deny-watch.js';
import { watchedIncludes } from '../helpers/include-watch.js';
import { waitFor } from '../helpers/poll.js';
import { watchFaults } from '../helpers/watch-fault.js';

void t.test('denied paths: a failed watch in a root stops the server', async (t) => {
  const { fail } = watchFaults(t);
  const { r, roots, reports, dw } = await watchedRoot(t);
  t.equal(fail(r), 1, 'the watch of the root failed');
  await waitFor(() => reports.length > 0, 30_000, 'the failure reported');
  t.match(reports[0], { path: r, access: 'all', why: /watching .* failed \(EIO/ });
  // The supervisor's next plan watches it afresh.
  await dw.update(roots);
  writeFileSync(join(r, '.env'), 'made after the failure');
  await waitFor(
    () => reports.some((d) => d.path === join(r, '.env')),
    30_000,
    'a denied path made after the failure reported',
  );
});

void t.test('include bases: a failed watch on the way is a change', async (t) => {
  const { fail } = watchFaults(t);
  const { r, roots, changed, iw } = await watchedIncludes(t);
  t.equal(fail(r), 1, 'the watch of the directory holding the base failed');
  t.same(changed, [r], 'reported as a change');
  // The next plan sets the watch again: the base moved is a change.
  await iw.update(roots);
  renameSync(join(r, 'conf.d'), join(r, 'conf.old'));
  await waitFor(() => changed.includes(join(r, 'conf.d')), 30_000, 'the base moved reported');
});
