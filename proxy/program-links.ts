/**
 * The links on the way to the server's program. The sandbox shows each file of the program at its
 * canonical place, and the gate runs the command as the policy or the host names it: a command
 * found through a link in a directory the sandbox does not show (pipx's `~/.local/bin/x`) was
 * "not found" inside, and so was a script whose `#!` line names a virtual environment's
 * `bin/python3`, a link to a link into a Python installation (pyenv's `versions/3.11.7/bin`).
 * Each link on the way that lies where the sandbox shows nothing is made again there, leading
 * straight to the file, which it shows; the directories that held them stay hidden.
 */
import { constants } from 'node:fs';
import { access, readlink, realpath, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { findOnPath } from '../common/find-on-path.js';
import { inside } from './sandbox-paths.js';
import { cannotStart } from './server-process.js';

/** A link to make in the sandbox. */
export interface ProgramLink {
  /** Where a link on the way to a file of the program lies outside. */
  path: string;
  /** The canonical file it leads to, in the end, which the sandbox shows. */
  target: string;
}

/** The most links followed from one name (the kernel's own limit). */
const MAX_HOPS = 40;

/**
 * The links to make for `named` (the program's files as the command line and `#!` lines name
 * them): every link on the way from a name to a file the sandbox shows (`shown` holds it) that
 * lies where nothing in `shown` does. A file the sandbox does not show gets none: it fails
 * inside as it would without them.
 */
export async function programLinks(
  named: readonly string[],
  shown: readonly string[],
): Promise<ProgramLink[]> {
  const visible = (p: string): boolean => shown.some((s) => inside(p, s));
  const links = new Map<string, string>();
  for (const name of new Set(named)) {
    const target = await realpath(name).catch(() => undefined);
    if (target === undefined || !visible(target)) continue;
    let at = name;
    for (let hop = 0; hop < MAX_HOPS; hop++) {
      const next = await readlink(at).catch(() => undefined);
      if (next === undefined) break;
      if (!visible(at)) links.set(at, target);
      // As the kernel reads a relative link: from the directory it is in, where that leads.
      const dir = await realpath(dirname(at)).catch(() => undefined);
      if (dir === undefined) break;
      at = resolve(dir, next);
    }
  }
  return [...links].map(([path, target]) => ({ path, target }));
}

/**
 * Why `command` cannot run at all, as the proxy sees it (the sandbox shows no more): not found
 * (127) or not an executable file (126), with what the host is told; undefined when it can run.
 */
export async function cannotRun(
  command: string,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): Promise<{ status: number; reason: string } | undefined> {
  const path = await findOnPath(command, env, cwd);
  const problem = (why: string, status: number) => ({
    status,
    reason: cannotStart(command, why, status),
  });
  if (path === undefined) return problem('not found on PATH', 127);
  const file = await stat(path).catch(() => undefined);
  if (file === undefined) return problem(`${path} does not exist`, 127);
  if (!file.isFile()) return problem(`${path} is not a file`, 126);
  try {
    await access(path, constants.X_OK);
    return undefined;
  } catch {
    return problem(`${path} is not executable`, 126);
  }
}
