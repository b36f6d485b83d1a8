/** The daemon's policy state and watcher, wired as daemon.ts wires them (watches first), in-process. */
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { makeLogger } from '../../daemon/logger.js';
import { PolicyState } from '../../daemon/state.js';
import { PolicyWatcher } from '../../daemon/watcher.js';
import type { FsView } from '../../policies/index.js';

/**
 * Start the state and watcher for the policy `dir/mcp-roots.yaml` on `fs`, closed when `t` ends.
 * `between[i]` runs once the watches of the i-th resolution are set and before its walk begins;
 * `seen` after every resolution.
 */
export async function startWatchedState(
  t: { teardown(fn: () => unknown): void },
  dir: string,
  fs: FsView,
  opts: {
    level?: 'debug' | 'error';
    between?: (() => void)[];
    seen?: (s: PolicyState) => void;
  } = {},
): Promise<PolicyState> {
  const log = makeLogger({
    level: opts.level ?? 'error',
    format: 'text',
    stream: new Writable({ write: (_c, _e, done) => done() }),
  });
  const state = new PolicyState({
    configFile: join(dir, 'mcp-roots.yaml'),
    grantsFile: join(dir, 'state', 'grants.yaml'),
    stateDir: join(dir, 'state'),
    runtimeDir: join(dir, 'run'),
    home: join(dir, 'home'),
    env: {},
    fs,
    log,
  });
  const watcher = new PolicyWatcher({
    state,
    log,
    settleMs: 20,
    rescanMs: 300_000,
    degradedRescanMs: 200,
    configFile: join(dir, 'mcp-roots.yaml'),
    grantsFile: join(dir, 'state', 'grants.yaml'),
  });
  const between = opts.between ?? [];
  state.watchFirst = async (targets) => {
    const release = await watcher.watchFirst(targets);
    between.shift()?.();
    return release;
  };
  const seen = opts.seen;
  if (seen) state.on('resolved', () => seen(state));
  t.teardown(async () => {
    await watcher.close();
    await state.close();
  });
  await state.start();
  await watcher.start();
  return state;
}
