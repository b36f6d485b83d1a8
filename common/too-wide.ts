/**
 * Directories too wide to open whole: `/`, the home directory, or one above it; opening one opens
 * every file the user has. The sandbox never mounts one whole for a server's program
 * (proxy/program.ts), and a question never offers one (proxy/ask-person.ts; the daemon refuses
 * such an `asked` grant): `/proc/self/root/etc` is `/etc`, and its directory `/`. Such access is
 * still the person's to give, in the policy or with `rootsctl grant`.
 */
import { realpathSync } from 'node:fs';
import { isInsideOrEqual } from './segments.js';

/** Whether `dir` is `/`, `home`, or above `home` (both spelled alike: canonical, say). */
export function tooWide(dir: string, home: string): boolean {
  return dir === '/' || isInsideOrEqual(home, dir);
}

/** The home directory as a canonical path is compared with it: where `$HOME` leads. */
export function canonicalHome(home: string): string {
  try {
    return realpathSync(home);
  } catch {
    return home; // missing: nothing canonical can be inside it anyway
  }
}
