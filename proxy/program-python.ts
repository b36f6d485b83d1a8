/**
 * What a Python program needs beside its executable file, for the sandbox to show read-only.
 *
 * - The virtual environment a command or a `#!` line names (pipx's and `uv tool`'s installs, a
 *   project's `.venv`): its `bin/python` is a link the kernel follows to start the script, and
 *   its `lib` holds the packages. Without it a pipx-installed server was "not found" inside.
 * - A Python outside the system (uv's own builds in `~/.local/share/uv/python`): its prefix's
 *   `lib`, where the standard library is, as a Node outside the system shows its modules.
 */
import { existsSync, lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isInsideOrEqual } from '../common/segments.js';
import { anyoneWrites, tooWideForProgram, type Bounds } from './program-bounds.js';
import { SYSTEM_PATHS } from './sandbox.js';

const isPython = (file: string): boolean => /^python(\d+(\.\d+)?)?$/.test(basename(file));

/**
 * The directories to show for `named` (a file of the program as the command line or a `#!` line
 * names it) and `real` (where it leads). A directory is shown only at its canonical place, where
 * the named path finds it, and never too wide (program-bounds.ts).
 */
export function pythonDirs(named: string, real: string, bounds: Bounds): string[] {
  const out: string[] = [];
  for (const file of new Set([named, real])) {
    const bin = dirname(file);
    const venv = dirname(bin);
    if (basename(bin) !== 'bin' || !existsSync(join(venv, 'pyvenv.cfg'))) continue;
    if (canonical(venv) && !tooWideForProgram(venv, bounds) && !anyoneWrites(venv)) out.push(venv);
  }
  if (isPython(real)) {
    const prefix = dirname(dirname(real));
    const lib = join(prefix, 'lib');
    const system = SYSTEM_PATHS.some(([s]) => isInsideOrEqual(prefix, s));
    if (!system && isRealDir(lib) && !tooWideForProgram(lib, bounds)) out.push(lib);
  }
  return out;
}

function canonical(p: string): boolean {
  try {
    return realpathSync(p) === p;
  } catch {
    return false;
  }
}

/** A directory itself, not a link to one. */
export function isRealDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}
