/**
 * The daemon's policy state and the watcher's edit detection (daemon/policy-edits.ts), in-process
 * and without the watcher: a test calls `reloadIfEdited` where the watcher's settle window would
 * end, so the order of loads and looks is the test's, not the scheduler's.
 */
import {
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Writable } from 'node:stream';
import type { Test } from 'tap';
import { makeLogger } from '../../daemon/logger.js';
import { PolicyEdits } from '../../daemon/policy-edits.js';
import { PolicyState } from '../../daemon/state.js';
import { nodeFs, type FsView } from '../../policies/index.js';

/**
 * Start the state on `policy` (written to `dir/mcp-roots.yaml`), in a new test directory; `fs`,
 * if given, is the state's view of the files (a test's, to hold a read).
 */
export async function editState(
  t: Test,
  policy: (dir: string) => string,
  fs: (dir: string) => FsView = () => nodeFs(),
) {
  // A directory of its own, not t.testdir(): tap removes that at the test's end, before the
  // teardowns, and the state may still be writing its pins file into it (ENOTEMPTY).
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'mr-edit-')));
  mkdirSync(join(dir, 'state'));
  const configFile = join(dir, 'mcp-roots.yaml');
  const grantsFile = join(dir, 'state', 'grants.yaml');
  writeFileSync(configFile, policy(dir));
  const state = new PolicyState({
    configFile,
    grantsFile,
    stateDir: join(dir, 'state'),
    runtimeDir: join(dir, 'run'),
    home: dir,
    env: {},
    fs: fs(dir),
    log: makeLogger({
      level: 'error',
      format: 'text',
      stream: new Writable({ write: (_c, _e, done) => done() }),
    }),
  });
  t.teardown(async () => {
    await state.close();
    rmSync(dir, { recursive: true, force: true });
  });
  await state.start();
  let graced = false;
  const edits = new PolicyEdits({
    state,
    grantsFile,
    settleMs: 20,
    closed: () => false,
    again: () => (graced = true),
  });
  /**
   * The watcher's look at the end of a settle window: whether it reloaded. A file gone since the
   * last look gets the watcher's grace (an editor's delete-then-write): it looks once more.
   */
  const look = async () => {
    graced = false;
    const reloaded = await edits.reloadIfEdited(true, true);
    return graced ? edits.reloadIfEdited(true, true) : reloaded;
  };
  /** The root paths `server` is served. */
  const roots = (server = 'fs') => state.resolved.roots(server).map((r) => fileURLToPath(r.uri));
  return { dir, configFile, grantsFile, state, edits, look, roots };
}

/** Point the link `link` at `target` in one step, as `ln -sfn` and a rename do. */
export function repoint(link: string, target: string): void {
  symlinkSync(target, `${link}.new`);
  renameSync(`${link}.new`, link);
}
