/**
 * Which strings in a tool call are paths, by the argument's name or by the value itself. The rules
 * are derived, not listed per server, because servers name their arguments as they like
 * (`repo_path`, `filePath`, `notebook-path`, `cwd`, `dest`).
 */
import { looseKey } from './ambiguous-keys.js';
import { asParsersRead } from './file-uri.js';
import { expandedAsGo, leadingVariables } from './shell-variables.js';
import { trimWide, WIDE_SPACE } from './wide-space.js';

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

/**
 * Words of a name about URLs: one of these, or ending with one (`sourceUrl`, `baseuri`,
 * `image_urls`); a word that only holds the letters (`security`, `hourly`, `during`) is not.
 */
const URL_WORDS = /(?:url|uri)s?$/;

/**
 * A name with case and separators folded away: `filePath`, `file_path`, `File-Path` → `filepath`.
 * Case is folded as the loosest server reader folds it (`ſource` is `source` to Go). With a
 * `separator`, each run of separators becomes one instead.
 */
function fold(name: string, separator = ''): string {
  return looseKey(name)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, separator);
}

/**
 * Whether an argument named `name` is taken as a path: its folded name contains one of
 * `PATH_WORDS` (`notebook_path`, `filename`, `workDir`, `TARGET`, `input-source`), whatever else
 * it says (`pathOrUrl`, `source_url`: see `isUrlName`). A false positive costs a refusal with a
 * clear message (and the policy's `tools` entry can say otherwise); a false negative would let a
 * path through unchecked.
 */
export function isPathName(name: string): boolean {
  const folded = fold(name);
  return PATH_WORDS.some((w) => folded.includes(w));
}

/**
 * Whether a word of `name` is about URLs (`source_url`, `fileUri`, `pathOrUrl`): a value there
 * with a scheme other than `file:` is a URL, not a path; any other value is still a path.
 */
export function isUrlName(name: string): boolean {
  return words(name).some((w) => URL_WORDS.test(w));
}

/**
 * A name's words: split at separators and where a lower-case letter or digit meets an upper-case
 * one (`fileUrl` → `file`, `url`; `security_policy_file` → `security`, `policy`, `file`).
 */
function words(name: string): string[] {
  return name
    .replace(/([\p{Ll}\p{Nd}])(\p{Lu})/gu, '$1 $2')
    .split(/\s+/)
    .flatMap((w) => fold(w, ' ').split(' '))
    .filter((w) => w !== '');
}

/**
 * How a string that is a path by its value begins: a `file:` URI, `~` (home), a `/` (absolute),
 * `./` or `../` (relative, which is refused); a backslash counts as a separator too. Variables
 * a server may expand before a `/` (`$VAR/`, `${VAR}/`, and what Go's `os.ExpandEnv` expands,
 * mostly to nothing: `$1/`, `$@/`, `${}/`, `$A$B/`, an unclosed `${/`) are found by
 * `leadingVariables`.
 */
const PATH_START = /^(?:file:\/*|~|\/+|\.\.?[/\\])/i;

/**
 * Whether a string is a path by its value, whatever its argument's name: once trimmed it starts
 * as a path does, and the first name after that start has no white space. So `/etc/passwd`,
 * `//etc/passwd`, `~/x`, `~root/x`, `file:///x`, `$HOME/x`, `../x`, `/home/me/My Documents/x`
 * and `/in/new⏎file` (a name may hold a line end) are paths, while text such as `// note`,
 * `/* comment *\/`, `~ 5 minutes`, `file: report` or `./build.sh --fast`, or code that starts
 * with a comment, is not. No top-level directory of a Linux system has white space in its name,
 * and an agent cannot create one there. "Trimmed" and "white space" are as the widest server
 * reader takes them: Python's `str.strip()` also takes U+0085 and U+001C to U+001F.
 *
 * A `..` name undoes that reasoning: a server that resolves the string as text (`path.resolve`,
 * `os.path.abspath`) drops the name before it, white space, line ends and all, and never asks
 * whether it exists. So a string with a `..` name is judged as it resolves, and is a path (which
 * the checks refuse for the `..`) when that leaves the directory it is resolved in
 * (`sub dir/../../secret`, `..`) or starts as a path by the rule above (`/no such dir/../etc/x`
 * and `/in/a⏎b/../../etc/x` are `/etc/x`). Text of several lines with spaces in them is code or
 * prose, not judged so (`/**` then ` * see a/../../b`): the sandbox is what holds a server that
 * opens such a string.
 */
export function looksLikePath(value: string): boolean {
  return readings(value).some(judged);
}

/**
 * `value` as the readers a server may put it through before it opens it read it: as given; as
 * a URL parser reads it before its scheme, unwrapped (`fi\tle:///x`, `<URL:file:///x>`), when
 * that is a `file:` URI (which the checks then refuse); NFKC-normalised (`／etc／passwd`,
 * `‥/‥/x`); percent-decoded (`%2e%2e/%2e%2e/x`), before or after that, as `unquote` and
 * `unquote_plus` decode, up to three times over; and each of these with its variables expanded
 * as Go's `os.ExpandEnv` expands them.
 */
function readings(value: string): string[] {
  const out = new Set([value]);
  const parsed = asParsersRead(value);
  if (/^file:/i.test(parsed)) out.add(parsed);
  // NFKC leaves ASCII as it is: not asked of most strings, which are long only as content.
  const normalised = NOT_ASCII.test(value) ? value.normalize('NFKC') : value;
  out.add(normalised);
  // Percent-decoded, as unquote and as unquote_plus (`+` a space), up to three times over.
  for (const start of [value, normalised, value.includes('+') ? value.replaceAll('+', ' ') : '']) {
    let text = start;
    for (let round = 0; round < 3 && /%[0-9a-fA-F]{2}/.test(text); round++) {
      text = unquoted(text);
      out.add(text);
      if (NOT_ASCII.test(text)) out.add(text.normalize('NFKC'));
    }
    if (text !== '') out.add(text);
  }
  // Expanded as Go's os.ExpandEnv expands it (an unset variable is nothing): `.$1./etc` is
  // `../etc`, `${HOME}_x` a directory beside the home.
  for (const text of [...out]) if (text.includes('$')) out.add(expandedAsGo(text, process.env));
  return [...out];
}

/**
 * `text` percent-decoded as Python's `unquote` decodes it: each run of escapes as UTF-8 bytes
 * (what is no UTF-8 becomes U+FFFD), and a `%` without two hex digits left as it is, where
 * `decodeURIComponent` gives up on the whole string.
 */
function unquoted(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    // a bad escape somewhere: the runs of good ones are decoded, as unquote does
  }
  return text.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) =>
    Buffer.from(run.replaceAll('%', ''), 'hex').toString('utf8'),
  );
}

// eslint-disable-next-line no-control-regex -- the whole of ASCII is the range
const NOT_ASCII = /[^\u0000-\u007f]/;

/** A `..` name: between separators (`/` or `\`, which some servers take for one) or the ends. */
const PARENT_NAME = /(?:^|[/\\])\.\.(?:[/\\]|$)/;

/** The rule of `looksLikePath` for one reading. */
function judged(value: string): boolean {
  const t = trimWide(value);
  // Several lines with spaces in them: code or prose, not judged by how it resolves. Lines as
  // every reader ends them: a character only Python ends a line at (U+0085) makes no prose.
  const prose = /[\r\n\u2028\u2029]/.test(t) && /[^\S\r\n\u2028\u2029]/.test(t);
  if (!prose && PARENT_NAME.test(t)) {
    const resolved = resolvedAsText(t);
    if (/^\.\.(?:\/|$)/.test(resolved)) return true;
    // `~/a/../..`, `$HOME/..`, `./a/..`: the start is gone from `resolved`, so judge the value.
    const started = PATH_START.test(t) || leadingVariables(t).end > 0;
    if (started && (!resolved.startsWith('/') || startsAsPath(resolved))) return true;
  }
  return startsAsPath(t);
}

/**
 * The rule of `looksLikePath` without the `..`: a path's start, then a plain first name; or
 * variables a server may expand, before a separator or alone with one of them named (`$HOME`,
 * `$HOME$1`: a directory; a special one alone, `$5`, is left to be text).
 */
function startsAsPath(t: string): boolean {
  if (t === '') return false;
  const variables = leadingVariables(t);
  if (variables.end > 0) {
    const next = t[variables.end];
    if (next === '/' || next === '\\') return true;
    if (next === undefined && variables.named) return true;
  }
  const m = PATH_START.exec(t);
  if (m === null) return false;
  // Searched, not split: the rest may be a megabyte of code that starts with a `/**` comment.
  const rest = t.slice(m[0].length);
  const separator = rest.search(/[/\\]/);
  return !WIDE_SPACE.test(separator < 0 ? rest : rest.slice(0, separator));
}

/**
 * `text` resolved as `path.resolve` and `os.path.abspath` resolve, without a working directory:
 * each `..` takes away the name before it; a relative path keeps the `..`s it has left over. A
 * backslash counts as a separator, as some servers take it.
 */
function resolvedAsText(text: string): string {
  const absolute = /^[/\\]/.test(text);
  const names: string[] = [];
  // A plain split, not one by a pattern: a value may be a megabyte of names.
  for (const name of text.replaceAll('\\', '/').split('/')) {
    if (name === '' || name === '.') continue;
    if (name !== '..') names.push(name);
    else if (names.length > 0 && names[names.length - 1] !== '..') names.pop();
    else if (!absolute) names.push('..');
  }
  return (absolute ? '/' : '') + names.join('/');
}
