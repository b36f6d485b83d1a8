/** `list`, `check` and `explain`: the same answers from the daemon or offline. */
import { closing } from '../../common/closing.js';
import { homeDir } from '../../common/locations.js';
import { openBackend, type Backend } from '../backend.js';
import type { ExplainResult } from '../../common/types.js';
import { asksAbout } from '../../common/ask-rule.js';
import {
  ASKED_FIRST_LINE,
  catchAllLine,
  checkLine,
  explainTable,
  noEntryLine,
  rootsTable,
} from '../format.js';
import { emit, EXIT, type ExitCode, type Io } from '../io.js';
import { showNote } from '../state-notes.js';
import { pathArgument } from '../path-argument.js';
import type { Options } from '../options.js';
import { inLine } from '../terminal-text.js';

/** On stderr: a name only `'*'` covers may be a typo (its answer stays on stdout, and exit 0). */
async function noteCatchAll(io: Io, backend: Backend, explained: ExplainResult): Promise<void> {
  if (explained.coveredBy !== 'catch-all') return;
  io.err(`rootsctl: ${catchAllLine(explained.server, await backend.serverNames())}`);
}

/**
 * On stderr: a name nothing in the policy covers is most likely a typo, said with the nearest
 * name (the answer and its exit code stay as they are); a name only `'*'` covers, as above.
 */
async function noteUnknown(io: Io, backend: Backend, explained: ExplainResult): Promise<void> {
  if (explained.coveredBy === undefined && explained.declared === false)
    io.err(`rootsctl: ${noEntryLine(explained.server, await backend.serverNames())}`);
  else await noteCatchAll(io, backend, explained);
}

async function withBackend(
  io: Io,
  opts: Options,
  use: (backend: Backend) => Promise<ExitCode>,
): Promise<ExitCode> {
  return closing(await openBackend(io, opts), use);
}

/**
 * `rootsctl list SERVER`. Exit 1 when no entry of the policy names SERVER (most likely a typo) or
 * there is no valid policy at all: an empty list then is not an answer about SERVER.
 */
export function list(io: Io, [server]: string[], opts: Options): Promise<ExitCode> {
  return withBackend(io, opts, async (backend) => {
    const result = await backend.list(server!);
    const json = opts.json ?? false;
    showNote(io, json, await backend.stateNotes());
    const explained = await backend.explain(server!);
    await noteCatchAll(io, backend, explained);
    // Named by an entry (even one with no roots, or only denies): its list, empty or not, is
    // the answer. Only a name no entry covers is the likely typo.
    const named = explained.declared || explained.coveredBy !== undefined;
    if (result.roots.length > 0 || named || explained.rules.some((r) => r.kind === 'root')) {
      emit(io, json, result, (r) => rootsTable(server!, r.roots, homeDir(io.env), Date.now()));
      return EXIT.ok;
    }
    const why = (await backend.noPolicy()) ?? noEntryLine(server!, await backend.serverNames());
    if (json) {
      emit(io, true, result, () => '');
      io.err(`rootsctl: ${inLine(why.trimEnd())}\n`);
    } else io.out(`${inLine(why.trimEnd())}\n`);
    return EXIT.fail;
  });
}

/** `rootsctl check SERVER PATH [--write]`: exit 1 when not allowed. */
export function check(io: Io, [server, path]: string[], opts: Options): Promise<ExitCode> {
  return withBackend(io, opts, async (backend) => {
    // A relative PATH means what it means in the caller's working directory, not the daemon's.
    const access = opts.write ? 'write' : 'read';
    const absolute = pathArgument(io, path!);
    const result = await backend.check(server!, absolute, access);
    showNote(io, opts.json ?? false, await backend.stateNotes());
    const explained = await backend.explain(server!);
    await noteUnknown(io, backend, explained);
    emit(io, opts.json ?? false, result, (r) =>
      asksAbout(explained.ask, r.refusal, r.access)
        ? checkLine(r) + ASKED_FIRST_LINE
        : checkLine(r),
    );
    return result.allowed ? EXIT.ok : EXIT.fail;
  });
}

/**
 * `rootsctl explain SERVER [--all]`: deny rules that affect nothing only with --all. Exit 1 when
 * no entry of the policy names SERVER, as `list` does: the likely typo is said on stderr, and a
 * script must not take the table of a name nothing covers for the server's.
 */
export function explain(io: Io, [server]: string[], opts: Options): Promise<ExitCode> {
  return withBackend(io, opts, async (backend) => {
    const result = await backend.explain(server!);
    showNote(io, opts.json ?? false, await backend.stateNotes());
    await noteUnknown(io, backend, result);
    emit(io, opts.json ?? false, result, (r) =>
      explainTable(r, homeDir(io.env), { all: opts.all ?? false }),
    );
    return result.coveredBy === undefined && result.declared === false ? EXIT.fail : EXIT.ok;
  });
}
