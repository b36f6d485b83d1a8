/**
 * How far up the sandbox looks for a server's program (its package, a Python's environment, a
 * Node's or Python's installation). Each was taken whole as the nearest directory holding its
 * mark (a `package.json`, a `pyvenv.cfg`), and an attacker pass found marks where nobody meant a
 * package: `/tmp/package.json` (anyone may leave one) showed the real `/tmp`, Kerberos tickets
 * and ssh-agent's directory with it; `npm install --prefix ~/.local` showed all of `~/.local`,
 * the daemon's decision log, grants and keyrings with it; a home reached through a link was not
 * known for the home, and showed whole.
 */
import { statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { whereItWouldBe } from '../common/where-it-would-be.js';
import { isInsideOrEqual } from '../common/segments.js';
import { tooWide } from '../common/too-wide.js';

export interface Bounds {
  /** Canonical (too-wide.ts, `canonicalHome`). */
  home: string;
  env: Readonly<Record<string, string | undefined>>;
}

const XDG_BASES = ['XDG_DATA_HOME', 'XDG_STATE_HOME', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME'];

/**
 * The home's base directories (XDG), where every program keeps its data, state and settings, as
 * spelled and where they lead: a `~/.local` moved to another disk and linked back was not known
 * for one, and all of it was shown again (an attacker pass). The variables are read from the
 * server's environment and from the proxy's, which may differ.
 */
function baseDirs(bounds: Bounds): string[] {
  const known = computed.get(bounds);
  if (known !== undefined) return known;
  const { home, env } = bounds;
  const given = XDG_BASES.flatMap((name) => [env[name], process.env[name]]);
  const spelled = [
    join(home, '.local/share'),
    join(home, '.local/state'),
    join(home, '.config'),
    join(home, '.cache'),
    ...given.filter((p): p is string => p !== undefined && isAbsolute(p)),
  ];
  const dirs = [...new Set([...spelled, ...spelled.map(whereItWouldBe)])];
  computed.set(bounds, dirs);
  return dirs;
}

/**
 * Each context's base directories, found once: a package's walk asks at every level it climbs,
 * and each answer is a `realpath` of eight places.
 */
const computed = new WeakMap<Bounds, string[]>();

/**
 * Whether `dir` may not be shown whole as a program's: `/`, the home or above it, or one of the
 * home's base directories (`~/.local/share`, `~/.config`, `$XDG_STATE_HOME`, ...) or above one
 * (`~/.local`).
 */
export function tooWideForProgram(dir: string, bounds: Bounds): boolean {
  return tooWide(dir, bounds.home) || baseDirs(bounds).some((base) => isInsideOrEqual(base, dir));
}

/** A directory anyone may write to (`/tmp`): nothing there or above is a program's by its marks. */
export function anyoneWrites(dir: string): boolean {
  try {
    return (statSync(dir).mode & 0o002) !== 0;
  } catch {
    return false;
  }
}
