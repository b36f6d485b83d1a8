/** Where list, check and explain get their answers: the daemon, or a policy evaluated offline. */
import type { Access, CheckResult, ExplainResult } from '../common/types.js';
import type { ListRootsResult } from '../protocol/methods.js';
import type { Io } from './io.js';
import { evaluateOffline } from './offline.js';

export interface Backend {
  list(server: string): Promise<ListRootsResult>;
  check(server: string, path: string, access: Access): Promise<CheckResult>;
  explain(server: string): Promise<ExplainResult>;
  close(): Promise<void>;
}

/** A backend over a policy file evaluated in this process (`--config FILE`). */
export async function offlineBackend(
  io: Io,
  opts: { config: string; stateDir?: string },
): Promise<Backend> {
  const { evaluation } = await evaluateOffline(io, opts);
  for (const e of evaluation.errors) {
    io.err(`error: ${e.file}:${e.line}:${e.column}: ${e.message}\n`);
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
    close: () => Promise.resolve(),
  };
}
