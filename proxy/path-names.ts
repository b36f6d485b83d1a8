/**
 * Which strings in a tool call are paths, by the argument's name or by the value itself. The rules
 * are derived, not listed per server, because servers name their arguments as they like
 * (`repo_path`, `filePath`, `notebook-path`, `cwd`, `dest`).
 */
import { looseKey } from './ambiguous-keys.js';
import { asParsersRead } from './file-uri.js';

/** Words that make an argument name path-like wherever they appear in it. */
const PATH_WORDS = [
  'path',
  'file',
  'dir',
  'folder',
  'root',
  'cwd',
  'repo',
  'dest',
  'dst',
  'src',
  'target',
  'output',
  'input',
  'source',
] as const;

/** Names about URLs take any scheme; their `file:` values are still caught by `looksLikePath`. */
const URL_WORDS = ['url', 'uri'] as const;

/**
 * A name with case and separators folded away: `filePath`, `file_path`, `File-Path` → `filepath`.
 * Case is folded as the loosest server reader folds it (`ſource` is `source` to Go).
 */
function fold(name: string): string {
  return looseKey(name)
    .toLowerCase()
    .replace(/[^a-z0-9]/g, '');
}

/**
 * Whether an argument named `name` is taken as a path: its folded name contains one of
 * `PATH_WORDS` (`notebook_path`, `filename`, `workDir`, `TARGET`, `input-source`) and none of
 * `URL_WORDS` (`source_url`). A false positive costs a refusal with a clear message (and the
 * policy's `tools` entry can say otherwise); a false negative would let a path through unchecked.
 */
export function isPathName(name: string): boolean {
  const folded = fold(name);
  if (URL_WORDS.some((w) => folded.includes(w))) return false;
  return PATH_WORDS.some((w) => folded.includes(w));
}

/**
 * How a string that is a path by its value begins: a `file:` URI, `~` (home), a `/` (absolute),
 * `$VAR/` or `${VAR}/` (a server may expand it), `./` or `../` (relative, which is refused); a
 * backslash counts as a separator too.
 */
const PATH_START = /^(?:(file:\/*)|~|\/+|(\$\{?[A-Za-z_][A-Za-z0-9_]*\}?\/)|\.\.?[/\\])/i;

/**
 * Whether a string is a path by its value, whatever its argument's name: once trimmed it is one
 * line that starts as a path does, and the first name after that start has no white space. So
 * `/etc/passwd`, `//etc/passwd`, `~/x`, `~root/x`, `file:///x`, `$HOME/x`, `../x` and
 * `/home/me/My Documents/x` are paths, while text such as `// note`, `/* comment *\/`,
 * `~ 5 minutes`, `file: report` or `./build.sh --fast`, or several lines of code, is not. No
 * top-level directory of a Linux system has white space in its name, and an agent cannot create
 * one there.
 */
export function looksLikePath(value: string): boolean {
  // A file URI to URL parsers (`fi\tle:///x`, `\u0001file:///x`), which the checks then refuse.
  const parsed = asParsersRead(value);
  if (parsed !== value && /^file:/i.test(parsed) && looksLikePath(parsed)) return true;
  const t = value.trim();
  if (t === '' || /[\r\n\u2028\u2029]/.test(t)) return false;
  const m = PATH_START.exec(t);
  if (m === null) return false;
  if (m[2] !== undefined) return true;
  const first = t.slice(m[0].length).split(/[/\\]/)[0] ?? '';
  return !/\s/.test(first);
}
