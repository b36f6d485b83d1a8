/**
 * A server command that cannot be started, told to the host with the status a shell would give
 * (127 not found, 126 not runnable) and what to do: the proxy's refusing stand-in answers with it,
 * and the proxy ends with that status once the host leaves (supervisor.ts).
 */
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { findOnPath } from '../common/find-on-path.js';

/**
 * What the host is told of a command that could not be started, with its status as a shell gives
 * it (127 not found, 126 not runnable): not found is most often a host started from a desktop,
 * whose PATH lacks the shell's.
 */
export function cannotStart(command: string, why: string, status: number): string {
  const notFound =
    status === 127
      ? "; is it on the host's PATH (a desktop host may not have your shell's)? Give its absolute path"
      : '';
  return `${command} could not be started: ${why} (status ${status})${notFound}`;
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
