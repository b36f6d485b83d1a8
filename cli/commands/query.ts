/** `list`, `check` and `explain`: the same answers from the daemon or offline. */
import { resolve } from 'node:path';
import { homeDir } from '../../common/locations.js';
import type { Access } from '../../common/types.js';
import type { Backend } from '../backend.js';
import { checkLine, explainTable, noEntryLine, rootsTable } from '../format.js';
import { emit, EXIT, type ExitCode, type Io } from '../io.js';

/** `rootsctl list SERVER`. */
export async function list(
  io: Io,
  backend: Backend,
  server: string,
  json: boolean,
): Promise<ExitCode> {
  const result = await backend.list(server);
  if (!json && result.roots.length === 0) {
    // An empty list for a name no entry matches is most likely a typo: say so (still a valid answer).
    const explained = await backend.explain(server);
    if (!explained.rules.some((r) => r.kind === 'root')) {
      io.out(noEntryLine(server, await backend.serverNames()));
      return EXIT.ok;
    }
  }
  emit(io, json, result, (r) => rootsTable(server, r.roots, homeDir(io.env), Date.now()));
  return EXIT.ok;
}

/** `rootsctl check SERVER PATH [--write]`: exit 1 when not allowed. */
export async function check(
  io: Io,
  backend: Backend,
  server: string,
  path: string,
  access: Access,
  json: boolean,
): Promise<ExitCode> {
  // A relative PATH means what it means in the caller's working directory, not the daemon's.
  const result = await backend.check(server, resolve(io.cwd, path), access);
  emit(io, json, result, checkLine);
  return result.allowed ? EXIT.ok : EXIT.fail;
}

/** `rootsctl explain SERVER`. */
export async function explain(
  io: Io,
  backend: Backend,
  server: string,
  json: boolean,
): Promise<ExitCode> {
  const result = await backend.explain(server);
  emit(io, json, result, (r) => explainTable(r, homeDir(io.env)));
  return EXIT.ok;
}
