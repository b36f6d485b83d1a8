/** Where list, check and explain get their answers: the daemon, or a policy evaluated offline. */
import { connect } from './connect.js';
import { ctl } from './hint.js';
import type { Io } from './io.js';
import { daemonStateNotes } from './state-notes.js';
import type { Options } from './options.js';
import type { Backend } from './backend-api.js';
import type { RootsClient } from '../protocol/client.js';

export type { Backend } from './backend-api.js';

/** `--config FILE`: the file evaluated here; else the running daemon. */
export async function openBackend(io: Io, opts: Options): Promise<Backend> {
  if (opts.config !== undefined) {
    // The policy engine is loaded only for offline answers: asking the daemon needs none of it.
    const { offlineBackend } = await import('./offline.js');
    return offlineBackend(io, opts, opts.config);
  }
  return onlineBackend(io, opts.socket);
}

/** A backend that asks the daemon. */
async function onlineBackend(io: Io, socket: string | undefined): Promise<Backend> {
  const client = await connect(io, socket);
  return {
    list: (server) => client.listRoots(server),
    check: (server, path, access) => client.check(server, path, access),
    explain: (server) => client.explain(server),
    serverNames: () => daemonServerNames(client),
    noPolicy: async () => {
      const { policy } = await client.status();
      if (policy.files.length > 0 || policy.errors.length === 0) return undefined;
      const n = policy.errors.length;
      return `mcp-rootsd has no valid policy: the policy has ${n} error${n === 1 ? '' : 's'} and none has loaded since it started, so every server has no roots. \`${ctl(io, 'status', socket)}\` shows the errors.`;
    },
    stateNotes: () => daemonStateNotes(io, client, socket),
    close: () => client.close(),
  };
}

/** The server names the daemon's policy (or a grant) names, for "did you mean". */
export async function daemonServerNames(client: RootsClient): Promise<string[]> {
  // `daemon/status` also lists names that are only subscribed to (a proxy's --server typo
  // among them): keep those an entry names (a daemon that predates `coveredBy`: gives roots).
  const names = (await client.status()).servers.map((s) => s.name);
  const explained = await Promise.all(names.map((n) => client.explain(n)));
  return names.filter((_, i) => {
    const e = explained[i]!;
    return e.coveredBy !== undefined
      ? e.coveredBy === 'name'
      : e.rules.some((r) => r.kind === 'root');
  });
}
