/**
 * A watched directory that goes away, or is replaced, as its own watch sees it. A handle whose
 * directory went kept quiet, and the daemon took it for the watch of the directory that stood
 * there a moment later (a stand-in removed and the original moved back, before the full look):
 * nothing made there was seen again until the rescan. Now each backend either watches what
 * stands there afresh or reports itself lost (the daemon then plans the watch again): the
 * per-directory watch (watch-dir.ts), the tree (watch-tree.ts), and the tree cut to a depth
 * (watch-backend.ts).
 */
import { mkdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { watchEntries, type WatchEvent } from '../../daemon/watch-dir.js';
import { defaultBackend } from '../../daemon/watch-backend.js';
import { watchTree } from '../../daemon/watch-tree.js';
import { waitFor } from '../helpers/poll.js';
import { ownedShortDir } from '../helpers/proxy.js';

type Open = (
  dir: string,
  onEvent: (e: WatchEvent) => void,
  onError: (e: Error) => void,
) => Promise<{ close(): Promise<void> }>;

const BACKENDS: [string, Open][] = [
  ['per directory', (dir, onEvent, onError) => watchEntries(dir, dir, onEvent, onError)],
  [
    'tree',
    (dir, onEvent, onError) =>
      watchTree(dir, onEvent, onError, { ignore: [], onOverflow: () => {} }),
  ],
  ['depth-limited', (dir, onEvent, onError) => defaultBackend.dir(dir, 1, onEvent, onError)],
];

for (const [name, open] of BACKENDS) {
  void t.test(`${name}: a directory that goes reports its watch lost`, async (t) => {
    const dir = join(ownedShortDir(t), 'w');
    mkdirSync(dir);
    const errors: Error[] = [];
    const handle = await open(
      dir,
      () => {},
      (e) => errors.push(e),
    );
    t.teardown(() => handle.close());
    renameSync(dir, `${dir}.away`);
    await waitFor(() => errors.length > 0, 10_000, 'the watch reported lost');
    t.match(errors[0], { code: 'ENOENT' }, 'as gone: the daemon plans the watch elsewhere');
  });

  void t.test(`${name}: a directory replaced is watched afresh, or reported lost`, async (t) => {
    const dir = join(ownedShortDir(t), 'w');
    mkdirSync(dir);
    const events: WatchEvent[] = [];
    const errors: Error[] = [];
    const handle = await open(
      dir,
      (e) => events.push(e),
      (e) => errors.push(e),
    );
    t.teardown(() => handle.close());
    renameSync(dir, `${dir}.old`);
    mkdirSync(dir);
    await new Promise((r) => setTimeout(r, 300));
    const made = join(dir, 'made');
    mkdirSync(made);
    await waitFor(
      () => errors.length > 0 || events.some((e) => e.path === made),
      10_000,
      'a directory made in the new one reported, or the watch reported lost',
    );
  });
}
