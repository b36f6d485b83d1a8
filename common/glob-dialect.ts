/**
 * The policy's glob dialect over picomatch, for every part that reads a policy's patterns (the
 * engine, the sandbox's layout): `*`, `**`, `?`, `[...]`, `{a,b}` and `\` escapes
 * (docs/policy.md). picomatch also reads `(...)` as a regular-expression group and `|` as an
 * alternation, with no option to stop it; in a policy they are characters of a name (Dropbox's
 * `Dropbox (Personal)`), so a pattern's parentheses and bars are escaped before picomatch
 * compiles it, and a scan never calls a path a glob or ends its base at a parenthesis. Without
 * this, a deny or a read-only glob written under such a folder matched nothing at all.
 */
import picomatch from 'picomatch';

/** Roots' globs: as in shells, `*`, `?` and `**` do not match a leading dot. */
export const ROOT_GLOB: picomatch.PicomatchOptions = {
  dot: false,
  noextglob: true,
  nonegate: true,
  strictSlashes: true,
};

/** Deny patterns and protected paths: they match dotfiles. */
export const DENY_GLOB: picomatch.PicomatchOptions = { dot: true, noextglob: true, nonegate: true };

/** `glob` with every parenthesis and bar not already escaped escaped: characters of a name. */
export function literalGroups(glob: string): string {
  if (!/[()|]/.test(glob)) return glob;
  let out = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '\\') {
      out += glob.slice(i, i + 2);
      i++;
    } else out += c === '(' || c === ')' || c === '|' ? `\\${c}` : c;
  }
  return out;
}

/** picomatch's matcher for `glob` in this dialect. */
export function globMatcher(
  glob: string,
  options: picomatch.PicomatchOptions,
): (input: string) => boolean {
  return picomatch(literalGroups(glob), options);
}

/** picomatch's expression for `glob` in this dialect. */
export function globRegExp(glob: string, options: picomatch.PicomatchOptions): RegExp {
  return picomatch.makeRe(literalGroups(glob), options);
}

/** picomatch's scan of `path` in this dialect: a parenthesis neither makes a glob nor ends a base. */
export function scanGlob(
  path: string,
  options: picomatch.PicomatchOptions,
): ReturnType<typeof picomatch.scan> {
  return picomatch.scan(path, { ...options, noparen: true });
}
