/**
 * The policy's glob dialect over picomatch, for every part that reads a policy's patterns (the
 * engine, the sandbox's layout): `*`, `**`, `?`, `[...]`, `{a,b}` and `\` escapes
 * (docs/policy.md). picomatch also reads `(...)` as a regular-expression group and `|` as an
 * alternation, with no option to stop it; in a policy they are characters of a name (Dropbox's
 * `Dropbox (Personal)`), so a pattern's parentheses and bars are escaped before picomatch
 * compiles it, as are brackets and braces that are no glob syntax (`Notes {old}`, an unclosed
 * `[`), and the split into a literal base and a glob is this module's own. Without this, a deny
 * or a read-only glob written under such a folder matched nothing at all.
 */
import picomatch from 'picomatch';

/**
 * Every character that can make a path or a name more than plain text (`*`, `?`, brackets,
 * braces, parentheses, the extglob and negation marks, the escape): a path with none is plain
 * without scanning it.
 */
export const GLOB_CHARACTERS = /[*?[\]{}()!+@\\]/;

/** Roots' globs: as in shells, `*`, `?` and `**` do not match a leading dot. */
export const ROOT_GLOB: picomatch.PicomatchOptions = {
  dot: false,
  noextglob: true,
  nonegate: true,
  strictSlashes: true,
};

/** Deny patterns and protected paths: they match dotfiles. */
export const DENY_GLOB: picomatch.PicomatchOptions = { dot: true, noextglob: true, nonegate: true };

/**
 * Where the glob part of `p` begins: its first `*` or `?`, its first `[` closed by a `]` in the
 * same name, or its first `{` closed by its `}` and holding a `,` or a `..` range at its own
 * level; -1 for none. Escaped characters are plain, and so is anything else: an unclosed `[` or
 * `{`, and a `{...}` with no comma (`Notes {old}`), are characters of a name, as in a shell.
 */
function globStart(p: string): number {
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') i++;
    else if (c === '*' || c === '?') return i;
    else if (c === '[' && bracketEnd(p, i) >= 0) return i;
    else if (c === '{' && braceEnd(p, i) >= 0) return i;
  }
  return -1;
}

/** The `]` that closes the bracket expression at `i`, in the same name; -1 for none. */
function bracketEnd(p: string, i: number): number {
  let j = i + 1;
  if (p[j] === '!' || p[j] === '^') j++;
  if (p[j] === ']') j++; // a `]` first is one of the characters
  for (; j < p.length; j++) {
    if (p[j] === '\\') j++;
    else if (p[j] === '/') return -1;
    else if (p[j] === ']') return j;
  }
  return -1;
}

/** The `}` that closes the brace group at `i` when it has a `,` or `..` of its own; else -1. */
function braceEnd(p: string, i: number): number {
  let depth = 0;
  let alternatives = false;
  for (let j = i; j < p.length; j++) {
    const c = p[j];
    if (c === '\\') j++;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) return alternatives ? j : -1;
    else if (depth === 1 && (c === ',' || (c === '.' && p[j + 1] === '.'))) alternatives = true;
  }
  return -1;
}

/**
 * `glob` as picomatch must read it for this dialect: parentheses and bars escaped (picomatch's
 * regular-expression groups and alternation), and every `[`, `]`, `{` and `}` that is not part
 * of a bracket expression or brace group escaped (picomatch gave up on `Notes {old}` and on an
 * unclosed `{`, and a deny under such a name matched nothing).
 */
export function forPicomatch(glob: string): string {
  if (!/[()|[\]{}]/.test(glob)) return glob;
  let out = '';
  const closes: number[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '\\') {
      out += glob.slice(i, i + 2);
      i++;
    } else if (c === '(' || c === ')' || c === '|') out += `\\${c}`;
    else if (c === '[') {
      const end = bracketEnd(glob, i);
      if (end < 0) out += '\\[';
      else {
        out += glob.slice(i, end + 1);
        i = end;
      }
    } else if (c === ']') out += '\\]';
    else if (c === '{') {
      const end = braceEnd(glob, i);
      if (end < 0) out += '\\{';
      else {
        closes.push(end);
        out += c;
      }
    } else if (c === '}') {
      if (closes.at(-1) === i) {
        closes.pop();
        out += c;
      } else out += '\\}';
    } else out += c;
  }
  return out;
}

/**
 * Why a `[` or `{` of `p` is a plain character, said beside a path that does not exist (a typo
 * such as `repos/[a` or `repos/{a,b` would otherwise read as a directory not made yet); undefined
 * when none is.
 */
export function plainBracketNote(p: string): string | undefined {
  for (let i = 0; i < p.length; i++) {
    const c = p[i];
    if (c === '\\') i++;
    else if (c === '[') {
      const end = bracketEnd(p, i);
      if (end < 0) {
        return 'its "[" has no "]" after it in the same name, so it is a plain character, not a glob\'s choice of characters ("[...]")';
      }
      i = end;
    } else if (c === '{' && braceEnd(p, i) < 0) {
      return 'its "{" opens no group closed by "}" and holding a ",", so it is a plain character, not a glob\'s alternatives ("{a,b}")';
    }
  }
  return undefined;
}

/** `path` with every character this dialect could read as syntax escaped: a literal name. */
export function escapeGlob(path: string): string {
  return path.replace(/[*?[\]{}()|\\]/g, '\\$&');
}

/** picomatch's matcher for `glob` in this dialect. */
export function globMatcher(
  glob: string,
  options: picomatch.PicomatchOptions,
): (input: string) => boolean {
  return picomatch(forPicomatch(glob), options);
}

/** picomatch's expression for `glob` in this dialect. */
export function globRegExp(glob: string, options: picomatch.PicomatchOptions): RegExp {
  return picomatch.makeRe(forPicomatch(glob), options);
}

/** A path split where its glob part begins (see `globStart`). */
export interface GlobScan {
  isGlob: boolean;
  /**
   * The names before the glob part, escapes undone ('' when the glob starts the path); a plain
   * path as written (a name may hold a backslash).
   */
  base: string;
  /** From the name the glob part begins in to the end, as written ('' for a plain path). */
  glob: string;
}

/**
 * Split `path` into its literal base and its glob. picomatch's own scan is not used: it calls
 * `Notes {old}/**\/*.key` or `a{b/*` no glob at all and returns the whole pattern as the base.
 */
export function scanGlob(path: string): GlobScan {
  const start = globStart(path);
  if (start < 0) return { isGlob: false, base: path, glob: '' };
  const slash = path.lastIndexOf('/', start);
  return {
    isGlob: true,
    base: slash < 0 ? '' : slash === 0 ? '/' : unescape(path.slice(0, slash)),
    glob: path.slice(slash + 1),
  };
}

function unescape(text: string): string {
  return text.includes('\\') ? text.replace(/\\(.)/gs, '$1') : text;
}

/**
 * True when a path has glob syntax (`*`, `**`, `?`, `[...]`, `{a,b}`). A path with no glob
 * character at all is answered without scanning it: every resolution asks this of each of the
 * 80-odd protected paths and every deny.
 */
export function isGlob(path: string): boolean {
  return GLOB_CHARACTERS.test(path) && scanGlob(path).isGlob;
}
