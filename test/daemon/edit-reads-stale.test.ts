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
import { nodeFs } from '../../policies/index.js';
import { editState } from '../helpers/edit-state.js';

const policy = (roots: string[]) =>
  `version: 1\nservers:\n  fs:\n    roots:\n${roots.map((r) => `      - path: "${r}"\n`).join('')}`;

void t.test("a load asked for between the watcher's read and its reload wins", async (t) => {
  const { dir, configFile, state, edits, roots } = await editState(t, (dir) => {
    for (const d of ['a', 'b']) mkdirSync(join(dir, d));
    return policy([join(dir, 'a')]);
  });
  t.equal(await edits.reloadIfEdited(true, true), false, 'the files as loaded at start');

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
  const watched = edits.reloadIfEdited(true, false);
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

void t.test('a look while a load reads waits for it, and compares with it', async (t) => {
  // The state's reads of `inc.yaml` wait for `gate`; its reads of the main file say so.
  let gate: Promise<void> = Promise.resolve();
  let mainRead = () => {};
  let inc = '';
  let main = '';
  const { dir, configFile, state, edits, roots } = await editState(
    t,
    (dir) => {
      for (const d of ['a', 'c']) mkdirSync(join(dir, d));
      writeFileSync(join(dir, 'inc.yaml'), 'version: 1\n');
      return `${policy([join(dir, 'a')])}include: ["inc.yaml"]\n`;
    },
    (dir) => {
      const real = nodeFs();
      [inc, main] = [join(dir, 'inc.yaml'), join(dir, 'mcp-roots.yaml')];
      return {
        ...real,
        readFile: async (p) => {
          if (p === inc) await gate;
          const read = await real.readFile(p);
          if (p === main) mainRead();
          return read;
        },
      };
    },
  );
  const B0 = `${policy([join(dir, 'a')])}include: ["inc.yaml"]\n`;
  const B1 = `${policy([join(dir, 'a'), join(dir, 'c')])}include: ["inc.yaml"]\n`;
  t.equal(await edits.reloadIfEdited(true, true), false, 'the files as loaded at start');

  writeFileSync(configFile, B1);
  let open!: () => void;
  gate = new Promise((resolve) => (open = resolve));
  const hasRead = new Promise<void>((resolve) => (mainRead = resolve));
  const asked = state.reload({ policy: true, grants: true, repin: true }, 'rootsctl reload');
  await hasRead; // the asked-for load has read B1 and waits on the include
  writeFileSync(configFile, B0); // undone, and the watcher looks meanwhile
  // The load's reading ends once the look has begun waiting for it (or, were it not to wait,
  // once the look is over: it would then have compared with the load at start).
  const settled = state.readsSettled.bind(state);
  state.readsSettled = () => (open(), settled());
  const looked = edits.reloadIfEdited(true, true).finally(open);
  await asked;
  t.equal(await looked, true, 'the look saw the file differ from what that load read');
  await state.fresh();
  t.same(roots(), [join(dir, 'a')], 'served as the file says now');
});
