/**
 * The watcher loads the policy from the bytes it read to compare (daemon/policy-edits.ts), not
 * from a second read. Those bytes are stale once another load has run after them: here the file
 * is deleted between the watcher's read and its reload, and `rootsctl reload` (a load asked for)
 * runs in between and finds it gone. The watcher's reload, queued behind it, must not bring the
 * deleted file's roots back from its older bytes. The OS makes this order only sometimes; the
 * test holds the watcher's reload until the asked-for one has run, so it is certain.
 */
import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import t from 'tap';
import { makeLogger } from '../../daemon/logger.js';
import { PolicyEdits } from '../../daemon/policy-edits.js';
import { PolicyState } from '../../daemon/state.js';
import { nodeFs } from '../../policies/index.js';

const policy = (roots: string[]) =>
  `version: 1\nservers:\n  fs:\n    roots:\n${roots.map((r) => `      - path: "${r}"\n`).join('')}`;

void t.test("a load asked for between the watcher's read and its reload wins", async (t) => {
  const dir = realpathSync(t.testdir());
  for (const d of ['a', 'b', 'state']) mkdirSync(join(dir, d));
  const configFile = join(dir, 'mcp-roots.yaml');
  writeFileSync(configFile, policy([join(dir, 'a')]));
  const state = new PolicyState({
    configFile,
    grantsFile: join(dir, 'state', 'grants.yaml'),
    stateDir: join(dir, 'state'),
    runtimeDir: join(dir, 'run'),
    home: dir,
    env: {},
    fs: nodeFs(),
    log: makeLogger({
      level: 'error',
      format: 'text',
      stream: new Writable({ write: (_c, _e, done) => done() }),
    }),
  });
  t.teardown(() => state.close());
  await state.start();
  const edits = new PolicyEdits({
    state,
    grantsFile: join(dir, 'state', 'grants.yaml'),
    settleMs: 20,
    closed: () => false,
    again: () => t.fail('no vanish grace is expected'),
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
  t.same(state.resolved.roots('fs'), [], 'its roots are gone');
});
