/**
 * A sandboxed server's program must not lie where another server may write. The sandbox shows
 * the program read-only, but the file itself is what runs: a server that may write the
 * directory (a filesystem server with the project root writable, say) could leave code there
 * that this server then runs, with this server's roots, network and grants. What the server may
 * write itself is its own affair (program.ts keeps such a file from choosing what is shown); what
 * others may write is refused here, before anything starts. The daemon says what the policy lets
 * other servers write (`policy/explain`'s `writers`, policies/resolution.ts).
 */
import type { Writer } from '../common/types.js';
import { isInsideOrEqual } from '../common/segments.js';
import { real, writtenBy } from './written-by.js';

/** Why the program cannot start, or undefined when no other server may write any part of it. */
export async function programWriterProblem(
  program: { program: readonly string[]; programGiven: readonly string[] },
  writers: readonly Writer[],
): Promise<string | undefined> {
  if (writers.length === 0) return undefined;
  // A `sandbox.write` path is as the policy expands it: compared where it leads too.
  const places = await Promise.all(
    writers.map(async (w) => ({ w, paths: unique([w.path, await real(w.path)]) })),
  );
  const writerOf = (path: string) => places.find((pl) => pl.paths.includes(path))!.w;
  // The files as the command line names them: the start follows a link on the way again, so a
  // link in a directory another server writes could be re-pointed after this check.
  const every = places.flatMap((pl) => pl.paths);
  for (const p of program.programGiven) {
    const hit = await writtenBy(p, every);
    if (hit !== undefined) return problem(p, writerOf(hit));
  }
  for (const p of program.program) {
    const shown = unique([p, await real(p)]);
    for (const { w, paths } of places) {
      // The program inside the writable path, or a writable path inside a directory shown as
      // part of the program (its node_modules, say).
      const hit = shown.some((s) =>
        paths.some((o) => isInsideOrEqual(s, o) || isInsideOrEqual(o, s)),
      );
      if (hit) return problem(p, w);
    }
  }
  return undefined;
}

function problem(p: string, w: Writer): string {
  const entry = `the policy's entry ${JSON.stringify(w.by)} (${w.file}:${w.line})`;
  const who = w.by === '*' ? 'every server' : 'another server';
  return (
    `the server's program includes ${p}, and ${entry} lets ${who} write ${w.path}, which ` +
    `overlaps it: another server could change the code this one runs in its sandbox. Keep ` +
    `the program where no other server may write (install it outside ${w.path}), or make ` +
    `that path read-only for ${JSON.stringify(w.by)} (readOnly: true)`
  );
}

const unique = (paths: (string | undefined)[]): string[] => [
  ...new Set(paths.filter((p): p is string => p !== undefined)),
];
