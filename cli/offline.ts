/** Evaluating a policy without a daemon, for `validate` and `--config`. */
import { RootsError } from '../common/errors.js';
import {
  configFile,
  grantsFile,
  homeDir,
  stateDir,
  tildify,
  type Env,
} from '../common/locations.js';
import { packageRoot } from '../common/package-info.js';
import {
  coverageOf,
  loadAndResolve,
  nodeFsSync,
  type LoadedAndResolved,
  type PolicyContext,
} from '../policies/index.js';
import type { Backend } from './backend-api.js';
import { problemLines, sortProblems } from './format.js';
import { ctl } from './hint.js';
import type { Io } from './io.js';
import { offlineLockdown } from './state-notes.js';
import type { Options } from './options.js';

/** The context the engine evaluates in, taken from this process. */
export function processContext(env: Env, extra: Partial<PolicyContext> = {}): PolicyContext {
  return {
    home: homeDir(env),
    env,
    now: Date.now(),
    fs: nodeFsSync(),
    installDir: packageRoot(),
    ...extra,
  };
}

/**
 * Evaluate the main policy file (or `config`) as the daemon would: with the grants file beside it
 * when `withGrants` (the daemon's own policy), alone otherwise (`validate FILE`).
 */
export async function evaluateOffline(
  io: Io,
  opts: { config?: string; stateDir?: string; socketDir?: string; withGrants?: boolean },
): Promise<{ evaluation: LoadedAndResolved; file: string }> {
  const file = configFile(io.env, io.cwd, opts.config);
  const state = stateDir(io.env, io.cwd, opts.stateDir);
  const ctx = processContext(io.env, { stateDir: state, runtimeDir: opts.socketDir });
  const evaluation = await loadAndResolve(
    {
      configFile: file,
      ...(opts.withGrants === false ? {} : { grantsFile: grantsFile(state) }),
    },
    ctx,
  );
  return { evaluation, file };
}

/**
 * A backend over a policy file evaluated in this process (`--config FILE`). A file with errors, or
 * none at all, is refused: an answer from it would read as a valid "no roots".
 */
export async function offlineBackend(io: Io, opts: Options, config: string): Promise<Backend> {
  const { evaluation, file } = await evaluateOffline(io, { config, stateDir: opts['state-dir'] });
  const shown = tildify(file, homeDir(io.env));
  if (evaluation.sources.missingMain) {
    throw new RootsError(
      'POLICY_NOT_FOUND',
      `${shown} does not exist; --config needs an existing policy file`,
    );
  }
  const n = evaluation.errors.length;
  if (n > 0) {
    io.err(problemLines('error', sortProblems(evaluation.errors), homeDir(io.env)));
    throw new RootsError(
      'POLICY_INVALID',
      `${shown} has ${n} error${n === 1 ? '' : 's'}; \`${ctl(io, `validate ${shown}`)}\` lists them`,
    );
  }
  const resolved = evaluation.resolved;
  return {
    list: (server) =>
      Promise.resolve({
        roots: resolved.roots(server),
        _meta: { 'mcp-roots/revision': 0, 'mcp-roots/instance': 'offline' },
      }),
    check: (server, path, access) => resolved.check(server, path, access),
    explain: (server) =>
      Promise.resolve({
        ...resolved.explain(server),
        ...coverageOf([...evaluation.sources.files, ...(evaluation.grants?.files ?? [])], server),
      }),
    serverNames: () => Promise.resolve(resolved.serverNames()),
    noPolicy: () => Promise.resolve(undefined),
    stateNotes: () => Promise.resolve(offlineLockdown(io, opts)),
    close: () => Promise.resolve(),
  };
}
