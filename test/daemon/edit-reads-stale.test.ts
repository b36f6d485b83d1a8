/**
 * The watcher loads the policy from the bytes it read to compare (daemon/policy-edits.ts), not
 * from a second read. Those bytes are stale once another load has run after them: here the file
 * is deleted between the watcher's read and its reload, and `rootsctl reload` (a load asked for)
 * runs in between and finds it gone. The watcher's reload, queued behind it, must not bring the
 * deleted file's roots back from its older bytes. The OS makes this order only sometimes; the
 * test holds the watcher's reload until the asked-for one has run, so it is certain.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { editState } from '../helpers/edit-state.js';

const policy = (roots: string[]) =>
  `version: 1\nservers:\n  fs:\n    roots:\n${roots.map((r) => `      - path: "${r}"\n`).join('')}`;

void t.test("a load asked for between the watcher's read and its reload wins", async (t) => {
  const { dir, configFile, state, edits, roots } = await editState(t, (dir) => {
    for (const d of ['a', 'b']) mkdirSync(join(dir, d));
    return policy([join(dir, 'a')]);
  });
  t.equal(await edits.reloadIfEdited(true, true, []), false, 'the files as loaded at start');

  // The watcher's (background) reload, called once it has read the files, waits for `go`.
  let read!: () => void;
  const hasRead = new Promise<void>((resolve) => (read = resolve));
  let go!: () => void;
  const gone = new Promise<void>((resolve) => (go = resolve));
  const reload = state.reload.bind(state);
  state.reload = async (...args) => {
    if (args[2] === true) {
      read();
      await gone;
    }
    return reload(...args);
  };

  writeFileSync(configFile, policy([join(dir, 'a'), join(dir, 'b')]));
  const watched = edits.reloadIfEdited(true, false, []);
  await hasRead;
  rmSync(configFile);
  t.same(await reload({ policy: true, grants: true, repin: true }, 'rootsctl reload'), {
    ok: true,
  });
  t.same(state.files, [], 'the asked-for load found the file gone');
  go();
  t.equal(await watched, true, 'the watcher reloaded');
  t.same(state.files, [], 'the deleted file is not loaded again from the older bytes');
  t.same(roots(), [], 'its roots are gone');
});
