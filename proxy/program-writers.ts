/**
 * A sandboxed server's program must not lie where another server may write. The sandbox shows
 * the program read-only, but the file itself is what runs: a server that may write the
 * directory (a filesystem server with the project root writable, say) could leave code there
 * that this server then runs, with this server's roots, network and grants. What the server may
 * write itself is its own affair (program.ts keeps such a file from choosing what is shown); what
 * others may write is refused here, before anything starts. The daemon says what the policy lets
 * other servers write (`policy/explain`'s `writers`, policies/resolution.ts).
 *
 * What counts as the program: the files the sandbox shows as it (its interpreter, script,
 * package, the `node_modules` it loads from, and where their links lead), what the start's
 * command line and environment name (start-names.ts), and every link on the way to those as
 * named (the start follows them again, after this check). What the server then chooses to run
 * from its own roots is the policy's to allow: a root shared with a server that writes it is
 * shared data (docs/security.md).
 */
import { lstat, readdir, readlink } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Writer } from '../common/types.js';
import { linksOnTheWay } from '../common/links-on-the-way.js';
import { isInsideOrEqual } from '../common/segments.js';
import { SYSTEM_PATHS } from './sandbox.js';
import { startNames } from './start-names.js';
import { real } from './written-by.js';

const SYSTEM_DIRS = SYSTEM_PATHS.map(([path]) => path);

/** What the start runs, as the sandbox's layout and the command line say. */
export interface ProgramToCheck {
  /**
   * The program's paths as the sandbox shows them (canonical): each one, also those inside
   * another and those in system directories.
   */
  program: readonly string[];
  /** The program's files as the command line names them, before links are followed. */
  programGiven: readonly string[];
  /** The command as the sandbox starts it (after npx is resolved), and what it is given. */
  command: string;
  args: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  /** What the sandbox shows of the filesystem besides the program: roots, extra paths. */
  visible: readonly string[];
}

/** Another server may write part of the program: which part, and who. */
export interface Overlap {
  /** What overlaps, in a clause: "the server's program includes …, and … lets … write …". */
  what: string;
  /** The whole refusal: `what`, why it matters, and what to do. */
  reason: string;
}

/** The overlap that stops the start, or undefined when no other server may write the program. */
export async function programOverlap(
  p: ProgramToCheck,
  writers: readonly Writer[],
): Promise<Overlap | undefined> {
  if (writers.length === 0) return undefined;
  // A `sandbox.write` path is as the policy expands it: compared where it leads too.
  const places = await Promise.all(
    writers.map(async (w) => ({ w, paths: unique([w.path, await real(w.path)]) })),
  );
  /** The writer whose path holds `path`, or one inside it when `both`. */
  const writerOf = (path: string, both: boolean) =>
    places.find(({ paths }) =>
      paths.some((o) => isInsideOrEqual(path, o) || (both && isInsideOrEqual(o, path))),
    )?.w;
  /**
   * The writer of a path as named: of it, or of where it leads (`both` as above), or of a link
   * on the way to it, which lies in its writer's path.
   */
  const writerOfNamed = async (path: string, both: boolean) => {
    const resolved = await real(path);
    let w = writerOf(path, both) ?? (resolved === undefined ? undefined : writerOf(resolved, both));
    for (const link of await linksOnTheWay(path, { lstat, readlink })) w ??= writerOf(link, false);
    return w;
  };

  // Named: the program's files as the command line gives them, and every file it names.
  const names = await startNames(p.command, p.args, p.env, p.cwd);
  for (const file of unique([...p.programGiven, ...names.files])) {
    const w = await writerOfNamed(file, false);
    if (w !== undefined) return overlap(file, w);
  }
  // Where the environment tells the loaders to look (LD_PRELOAD, NODE_PATH, PYTHONPATH ...): a
  // file or directory there, or one holding a writer's path, is code the start may load.
  for (const path of names.loaderPaths) {
    const w = await writerOfNamed(path, true);
    if (w !== undefined) return overlap(path, w);
  }
  // Where an interpreter looks by default: only what the sandbox shows can be loaded from there.
  for (const path of names.searched) {
    if (!p.visible.some((v) => isInsideOrEqual(path, v) || isInsideOrEqual(v, path))) continue;
    const w = await writerOfNamed(path, true);
    if (w !== undefined) return overlap(path, w);
  }
  // Shown: inside a writer's path, or holding one (its node_modules, say); and a package linked
  // into a shown node_modules (npm link, workspaces), which the sandbox follows too.
  for (const shown of p.program) {
    // A system directory itself (a system Node's prefix, `/usr`) is shown for what it holds,
    // not as code: only a writer path it lies in counts, not one somewhere below it.
    const whole = !SYSTEM_DIRS.some((s) => isInsideOrEqual(s, shown));
    const w = writerOf(shown, whole);
    if (w !== undefined) return overlap(shown, w);
    const modules = basename(shown) === 'node_modules' ? shown : join(shown, 'node_modules');
    for (const link of await linkedPackages(modules)) {
      const target = await real(link);
      const lw = target === undefined ? undefined : writerOf(target, true);
      if (lw !== undefined) return overlap(link, lw);
    }
  }
  return undefined;
}

function overlap(p: string, w: Writer): Overlap {
  const entry = `the policy's entry ${JSON.stringify(w.by)} (${w.file}:${w.line})`;
  const who = w.by === '*' ? 'every server' : 'another server';
  const what = `the server's program includes ${p}, and ${entry} lets ${who} write ${w.path}`;
  return {
    what,
    reason:
      `${what}, which overlaps it: another server could change the code this one runs in its ` +
      `sandbox. Keep the program where no other server may write (install it outside ` +
      `${w.path}), or make that path read-only for ${JSON.stringify(w.by)} (readOnly: true)`,
  };
}

/** The links among a `node_modules`' packages (`dep`, `@scope/dep`): linked packages. */
async function linkedPackages(modules: string): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(modules, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const p = join(modules, e.name);
    if (e.isSymbolicLink()) out.push(p);
    else if (e.isDirectory() && e.name.startsWith('@')) {
      for (const s of await readdir(p, { withFileTypes: true }).catch(() => [])) {
        if (s.isSymbolicLink()) out.push(join(p, s.name));
      }
    }
  }
  return out;
}

const unique = <T>(items: (T | undefined)[]): T[] => [
  ...new Set(items.filter((p): p is T => p !== undefined)),
];
