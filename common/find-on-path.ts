/** Finding a program the way `execvp` does, for the proxy's launches and doctor's checks alike. */
import { constants } from 'node:fs';
import { access } from 'node:fs/promises';
import { delimiter, resolve } from 'node:path';

/** `command` as `execvp` would find it: through PATH unless it holds a slash. */
export async function findOnPath(
  command: string,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): Promise<string | undefined> {
  if (command.includes('/')) return resolve(cwd, command);
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const p = resolve(cwd, dir, command);
    try {
      await access(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  return undefined;
}
