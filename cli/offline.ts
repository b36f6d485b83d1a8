/** Evaluating a policy without a daemon, for `validate` and `--config`. */
import { configFile, grantsFile, homeDir, stateDir, type Env } from '../common/locations.js';
import { packageRoot } from '../common/package-info.js';
import { evaluatePolicy, nodeFs, type Evaluation, type PolicyContext } from '../policies/index.js';
import type { Io } from './io.js';

/** The context the engine evaluates in, taken from this process. */
export function processContext(env: Env, extra: Partial<PolicyContext> = {}): PolicyContext {
  return {
    home: homeDir(env),
    env,
    now: Date.now(),
    fs: nodeFs(),
    installDir: packageRoot(),
    ...extra,
  };
}

/** Evaluate the main policy file (or `file`) with the grants file beside it, as the daemon would. */
export async function evaluateOffline(
  io: Io,
  opts: { config?: string; stateDir?: string; socketDir?: string },
): Promise<{ evaluation: Evaluation; file: string }> {
  const file = configFile(io.env, io.cwd, opts.config);
  const state = stateDir(io.env, io.cwd, opts.stateDir);
  const ctx = processContext(io.env, { stateDir: state, runtimeDir: opts.socketDir });
  const evaluation = await evaluatePolicy({ configFile: file, grantsFile: grantsFile(state) }, ctx);
  return { evaluation, file };
}
