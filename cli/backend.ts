/** Where list, check and explain get their answers: the daemon, or a policy evaluated offline. */
import { RootsError } from '../common/errors.js';
import { homeDir, tildify } from '../common/locations.js';
import type { Access, CheckResult, ExplainResult } from '../common/types.js';
import type { ListRootsResult } from '../protocol/methods.js';
import { problemLines, sortProblems } from './format.js';
import type { Io } from './io.js';
import { evaluateOffline } from './offline.js';

export interface Backend {
  list(server: string): Promise<ListRootsResult>;
  check(server: string, path: string, access: Access): Promise<CheckResult>;
  explain(server: string): Promise<ExplainResult>;
  /** The server names the policy has entries for, sorted (for "did you mean"). */
  serverNames(): Promise<string[]>;
  close(): Promise<void>;
}

/**
 * A backend over a policy file evaluated in this process (`--config FILE`). A file with errors, or
 * none at all, is refused: an answer from it would read as a valid "no roots".
 */
export async function offlineBackend(
  io: Io,
  opts: { config: string; stateDir?: string },
): Promise<Backend> {
  const { evaluation, file } = await evaluateOffline(io, opts);
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
      `${shown} has ${n} error${n === 1 ? '' : 's'}; \`rootsctl validate ${shown}\` lists them`,
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
    explain: (server) => Promise.resolve(resolved.explain(server)),
    serverNames: () => Promise.resolve(resolved.serverNames()),
    close: () => Promise.resolve(),
  };
}
