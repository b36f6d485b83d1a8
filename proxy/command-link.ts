/**
 * Where the sandbox finds the server's command. The gate runs the command as the policy or the
 * host names it, through PATH, and the sandbox shows the program's file at its canonical place
 * only: a command found through a link in a directory the sandbox does not show (pipx's
 * `~/.local/bin/x`, leading into its virtual environment; a `~/bin` of links) was "not found"
 * inside. The link itself is made again in the sandbox, leading to the file it shows.
 */
import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';
import { findOnPath } from '../common/find-on-path.js';
import { inside } from './sandbox-paths.js';
import { cannotStart } from './server-process.js';

export interface CommandLink {
  /** Where the command is found outside (on PATH, or its path as given), made a link inside. */
  path: string;
  /** The canonical file it leads to, which the sandbox shows. */
  target: string;
}

/**
 * The link to make for `command`, when it is found at a place the sandbox does not show (nothing
 * in `shown` holds it) and leads to a file that it does show; otherwise none is needed or none
 * would help (the command then fails inside as it would outside).
 */
export async function commandLink(
  command: string,
  ctx: { env: Readonly<Record<string, string | undefined>>; cwd: string },
  shown: readonly string[],
): Promise<CommandLink | undefined> {
  const path = await findOnPath(command, ctx.env, ctx.cwd);
  if (path === undefined) return undefined;
  const target = await realpath(path).catch(() => undefined);
  if (target === undefined || target === path) return undefined;
  const visible = (p: string): boolean => shown.some((s) => inside(p, s));
  return !visible(path) && visible(target) ? { path, target } : undefined;
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
