/** Turning a path as written in a policy into an absolute path or glob (docs/policy.md rule 1). */
import { dirname, isAbsolute } from 'node:path';
import { globRegExp, ROOT_GLOB, scanGlob } from '../common/glob-dialect.js';
import { normalizeLexically } from './paths.js';

/** The options of the one glob dialect used for policy paths (common/glob-dialect.ts). */
export const GLOB_OPTIONS = ROOT_GLOB;

export type Expanded = { ok: true; path: string } | { ok: false; message: string };

const VAR = /\$(?:\{([^}]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g;

/**
 * Expand `~`, `$VAR`, `${VAR}`, make relative paths absolute against `baseDir`, and resolve
 * `..` lexically. An unset variable or a NUL byte is an error, never an empty string.
 */
export function expandPath(
  raw: string,
  baseDir: string,
  ctx: { home: string; env: Record<string, string | undefined> },
): Expanded {
  if (raw.includes('\0'))
    return { ok: false, message: `${JSON.stringify(raw)}: contains a NUL byte` };
  /** The first unset variable, as written (`$HOME` or `${HOME}`), and its name. */
  let missing: { written: string; name: string } | undefined;
  let invalid: string | undefined;
  let path = raw.replace(VAR, (whole, braced: string | undefined, bare: string | undefined) => {
    const name = braced ?? bare ?? '';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      invalid ??= whole;
      return whole;
    }
    const value = ctx.env[name];
    if (value === undefined) {
      missing ??= { written: whole, name };
      return whole;
    }
    return value;
  });
  if (invalid !== undefined) {
    return {
      ok: false,
      message: `${invalid}: not a valid variable name (write \${NAME} with letters, digits and _)`,
    };
  }
  if (missing !== undefined) {
    return {
      ok: false,
      message: `${missing.written}: environment variable ${missing.name} is not set (set it in the daemon's environment, e.g. \`systemctl --user set-environment ${missing.name}=...\`, or write the path out)`,
    };
  }
  if (path.includes('\0'))
    return { ok: false, message: `${JSON.stringify(raw)}: expands to a path with a NUL byte` };
  if (path === '~' || path.startsWith('~/')) path = ctx.home + path.slice(1);
  else if (path.startsWith('~')) {
    return {
      ok: false,
      message: `${JSON.stringify(raw)}: ~user is not supported; write the full path`,
    };
  }
  if (!isAbsolute(path)) path = `${baseDir}/${path}`;
  return { ok: true, path: normalizeLexically(path) };
}

/** The directory relative policy paths are taken against: the file's own (a link's own) directory. */
export function policyDir(file: string): string {
  return dirname(file);
}

/**
 * `globMatcher(glob, GLOB_OPTIONS)` as a plain test: what its matcher decides for these options (a
 * non-empty input equal to the glob, or matched by the glob's expression), without the two
 * result objects the matcher makes per call. A walk of 100,000 entries asks it of each name.
 */
export function globTest(glob: string): (input: string) => boolean {
  const re = globRegExp(glob, GLOB_OPTIONS);
  return (input) => input !== '' && (input === glob || re.test(input));
}

export { isGlob } from '../common/glob-dialect.js';

/** Split a glob into its static base directory and the glob part below it. */
export function splitGlob(pattern: string): { base: string; glob: string } {
  const scan = scanGlob(pattern);
  const base = scan.base === '' ? '/' : scan.base;
  return { base, glob: scan.glob };
}
