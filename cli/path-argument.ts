/** A PATH on rootsctl's command line, made absolute as the person meant it. */
import { isAbsolute } from 'node:path';
import { RootsError } from '../common/errors.js';
import { homeDir } from '../common/locations.js';
import type { Io } from './io.js';

/**
 * `given` as an absolute path: a leading `~` or `~/` is the home directory, as in the policy (a
 * quoted `'~/x'` reaches rootsctl unexpanded, and meant the home, not a directory named `~`);
 * a relative path joins the working directory as written. `..` is never collapsed here: the
 * daemon takes it where the kernel does, after the links before it.
 */
export function pathArgument(io: Io, given: string): string {
  if (given === '~' || given.startsWith('~/')) return homeDir(io.env) + given.slice(1);
  if (given.startsWith('~')) {
    throw new RootsError(
      'USAGE',
      `${given}: ~user is not supported; write the full path (or ~/... for your own home)`,
    );
  }
  return isAbsolute(given) ? given : `${io.cwd === '/' ? '' : io.cwd}/${given}`;
}
