/**
 * What a server's start names, read as Node and the loaders read it: the files its command line
 * and `NODE_OPTIONS` name, and the paths its environment gives the loaders (`LD_PRELOAD`,
 * `NODE_PATH` ...), an `--env-file`'s variables included. program-writers.ts checks each against
 * what other servers may write. A data file named there counts too: what a program reads at start
 * (a config, an env file) steers what it runs.
 */
import { stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readRegularFile } from '../common/read-regular-file.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface StartNames {
  /** Files (or a package's directory) that the start loads or reads, absolute. */
  files: string[];
  /** Paths the loaders look in or load, absolute: files or directories. */
  loaderPaths: string[];
  /**
   * Directories an interpreter looks in by default at start, named by nothing in the start
   * (Python's working directory for `-m` and `-c`, its user site-packages): code there runs when
   * the sandbox shows it, so they count where it does.
   */
  searched: string[];
}

/** Options whose value Node loads (a bare name through `node_modules`, as `require` does). */
const LOADING = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader']);
/** As Node completes `--require FILE`: with an extension, or a directory's index. */
const NODE_SUFFIXES = ['.js', '.cjs', '.mjs', '.json', '.node', '/index.js', '/index.cjs'];
/** An env file larger than this is not read (Node reads it whole at every start). */
const ENV_FILE_MAX = 1 << 20;

export async function startNames(
  command: string,
  args: readonly string[],
  env: Env,
  cwd: string,
): Promise<StartNames> {
  const words = [...args, ...nodeOptionsWords(env.NODE_OPTIONS)];
  const files: string[] = [];
  /** Variables set by env files, which Node applies as the environment's. */
  const fileEnv: Record<string, string> = {};
  /** Variables a word sets (`env NAME=value CMD`, or any wrapper's): the program's environment. */
  const assigned: Record<string, string> = {};
  /** Env files read: each once, so that one naming itself ends. */
  const read = new Set<string>();
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const eq = word.startsWith('-') ? word.indexOf('=') : -1;
    const option = eq > 0 ? word.slice(0, eq) : words[i - 1];
    const value = eq > 0 ? word.slice(eq + 1) : word;
    const assignment = ASSIGNMENT.exec(word);
    if (assignment) {
      assigned[assignment[1]!] = assignment[2]!;
      if (assignment[1] === 'NODE_OPTIONS') words.push(...nodeOptionsWords(assignment[2]));
    }
    // A `data:` URL (`--import=data:text/javascript,import "file:///…"`): its text is code, read
    // as a code string is.
    const data = dataText(value);
    if (data !== undefined) words.push(data);
    // A command or code string (`sh -c`, `env -S`, `node -e`): the names in it count too. What
    // it computes is its own (docs/security.md), but a name written there is read here.
    if (/[\s'"`;|&()<>]/.test(word)) {
      for (const token of word.split(/[\s'"`;|&()<>,=]+/).slice(0, MAX_TOKENS)) {
        const named = asPath(token, cwd);
        const inside = named && (await firstPresent(withSuffixes(named)));
        if (inside) files.push(inside);
      }
    }
    const path = asPath(value, cwd);
    if (path === undefined) continue;
    const found = await firstPresent(withSuffixes(path));
    if (found !== undefined) files.push(found);
    if (option?.startsWith('--env-file') === true) {
      // Counted even while absent (`--env-file-if-exists`): it may be made before Node looks.
      if (found === undefined) files.push(path);
      else if (!read.has(found)) {
        read.add(found);
        const vars = await envFileVariables(found);
        Object.assign(fileEnv, vars);
        words.push(...nodeOptionsWords(vars.NODE_OPTIONS));
      }
    } else if (found === undefined && LOADING.has(option ?? '') && isBare(value)) {
      const pkg = await packageFrom(value, cwd);
      if (pkg !== undefined) files.push(pkg);
    }
  }
  return {
    files,
    loaderPaths: [
      ...loaderPaths(env, cwd),
      ...loaderPaths(fileEnv, cwd),
      ...loaderPaths(assigned, cwd),
    ],
    searched: pythonStart(command, args, env, cwd),
  };
}

/** The text of a `data:` URL, decoded (percent or base64), or undefined for any other word. */
export function dataText(value: string): string | undefined {
  if (!value.startsWith('data:')) return undefined;
  const comma = value.indexOf(',');
  if (comma < 0) return undefined;
  const payload = value.slice(comma + 1, comma + 1 + ENV_FILE_MAX);
  if (/;base64$/i.test(value.slice(0, comma))) return Buffer.from(payload, 'base64').toString();
  try {
    return decodeURIComponent(payload);
  } catch {
    return payload;
  }
}

/** `NAME=value`: a variable a wrapper (`env`) sets for the command after it. */
const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/;

/** A Python interpreter's file name. */
const PYTHON = /^python[0-9.]*$/;

/**
 * A Python the start runs, itself or through a wrapper (`env`, `nice`, `timeout`, `setsid`:
 * the first word that names a Python), and where it then looks unasked. `env -C DIR` (or
 * `--chdir`) before it is the directory it starts in.
 */
function pythonStart(command: string, args: readonly string[], env: Env, cwd: string): string[] {
  if (PYTHON.test(basename(command))) return pythonSearched(args, env, cwd);
  let dir = cwd;
  /** The environment as the wrapper's `NAME=value` words before the Python leave it. */
  const vars: Record<string, string | undefined> = { ...env };
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const assignment = ASSIGNMENT.exec(a);
    if (assignment) vars[assignment[1]!] = assignment[2]!;
    else if (a === '-C' || a === '--chdir') dir = resolve(dir, args[++i] ?? '');
    else if (a.startsWith('--chdir=')) dir = resolve(dir, a.slice('--chdir='.length));
    else if (PYTHON.test(basename(a))) return pythonSearched(args.slice(i + 1), vars, dir);
  }
  return [];
}

/** The most names read out of one command or code string. */
const MAX_TOKENS = 1000;

const withSuffixes = (path: string) => [path, ...NODE_SUFFIXES.map((x) => path + x)];

/**
 * Where Python looks for modules at start without being told: first on `sys.path`, a script's
 * own directory, or the working directory for `-m`, `-c` or standard input (a `json.py` there
 * stands in for the standard library's; not with `-I` or `-P`), and the user's site-packages,
 * whose `.pth` files run as it starts (not with `-s`, `-I` or `PYTHONNOUSERSITE`).
 */
function pythonSearched(args: readonly string[], env: Env, cwd: string): string[] {
  /** What comes first on `sys.path`: the working directory, or a script's own. */
  let first = cwd;
  let isolated = env.PYTHONSAFEPATH !== undefined && env.PYTHONSAFEPATH !== '';
  let noUserSite = env.PYTHONNOUSERSITE !== undefined && env.PYTHONNOUSERSITE !== '';
  scan: for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-') break;
    // After `--`, or a word that is not an option: the script.
    const script = a === '--' ? args[i + 1] : a.startsWith('-') ? undefined : a;
    if (script !== undefined || a === '--') {
      if (script !== undefined) first = dirname(resolve(cwd, script));
      break;
    }
    if (a === '--check-hash-based-pycs') i++;
    if (a.startsWith('--')) continue;
    for (let k = 1; k < a.length; k++) {
      const c = a[k]!;
      if (c === 'I') isolated = noUserSite = true;
      else if (c === 'P') isolated = true;
      else if (c === 's') noUserSite = true;
      else if (c === 'm' || c === 'c') break scan;
      else if (c === 'W' || c === 'X') {
        if (k === a.length - 1) i++;
        break;
      }
    }
  }
  const out: string[] = [];
  if (!isolated) out.push(first);
  const base = env.PYTHONUSERBASE || (env.HOME ? join(env.HOME, '.local') : undefined);
  if (!noUserSite && base) out.push(join(resolve(cwd, base), 'lib'));
  return out;
}

/**
 * The words of `NODE_OPTIONS` as Node splits them: at white space outside double quotes, the
 * quotes removed, a backslash inside them taking the next character as it is.
 */
export function nodeOptionsWords(text: string | undefined): string[] {
  const out: string[] = [];
  let word = '';
  let inWord = false;
  let quoted = false;
  for (let i = 0; i < (text ?? '').length; i++) {
    const c = text![i]!;
    if (quoted && c === '\\' && i + 1 < text!.length) word += text![++i];
    else if (c === '"') {
      quoted = !quoted;
      inWord = true;
    } else if (!quoted && /\s/.test(c)) {
      if (inWord) out.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) out.push(word);
  return out;
}

/**
 * An env file's variables as Node's parser reads them: `KEY=value` lines (`export` allowed), a
 * quoted value up to its closing quote, an unquoted one up to a ` #` comment. Only a regular file
 * of at most `ENV_FILE_MAX` bytes is read, without blocking (a FIFO would hold the check).
 */
export async function envFileVariables(file: string): Promise<Record<string, string>> {
  const text = await readRegularFile(file, ENV_FILE_MAX);
  if (text === undefined) return {};
  const vars: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/.exec(lines[i]!);
    if (!m) continue;
    let raw = m[2]!;
    const quote = /^["'`]/.exec(raw)?.[0];
    if (quote === undefined) {
      vars[m[1]!] = raw.replace(/\s+#.*$/, '').trim();
      continue;
    }
    // A quoted value runs to its closing quote, over lines if need be, as Node reads it
    // (`NODE_OPTIONS="--title=a` then `b --require FILE"` on the next line).
    // A quote never closed is read as the line it is on, and the lines after it as lines.
    let close = raw.indexOf(quote, 1);
    let end = i;
    while (close < 0 && end + 1 < lines.length) {
      raw += `\n${lines[++end]!}`;
      close = raw.indexOf(quote, 1);
    }
    if (close < 0) {
      vars[m[1]!] = m[2]!.replace(/\s+#.*$/, '').trim();
      continue;
    }
    i = end;
    const value = raw.slice(1, close);
    vars[m[1]!] = quote === '"' ? value.replace(/\\n/g, '\n') : value;
  }
  return vars;
}

function asPath(value: string, cwd: string): string | undefined {
  if (value.startsWith('file:')) {
    try {
      return fileURLToPath(value);
    } catch {
      return undefined;
    }
  }
  return value === '' || value.startsWith('-') ? undefined : resolve(cwd, value);
}

/**
 * The first of `paths` that is a file a loader could read code from: a regular file, or a FIFO
 * (whoever writes its other end writes the code). Not a Unix socket, which open(2) refuses: one
 * named is a channel the server uses as it runs, as it uses its roots.
 */
async function firstPresent(paths: string[]): Promise<string | undefined> {
  for (const p of paths) {
    const st = await stat(p).catch(() => undefined);
    if (st !== undefined && (st.isFile() || st.isFIFO())) return p;
  }
  return undefined;
}

/** A name `require` looks up in `node_modules`, not a path. */
const isBare = (value: string) =>
  !value.startsWith('.') && !value.startsWith('/') && !value.includes(':');

/** The package directory `require(name)` would find from `cwd`: its `node_modules`, or above. */
async function packageFrom(name: string, cwd: string): Promise<string | undefined> {
  const pkg = name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0]!;
  for (let d = cwd; ; d = dirname(d)) {
    const dir = join(d, 'node_modules', pkg);
    if ((await stat(dir).catch(() => undefined)) !== undefined) return dir;
    if (dirname(d) === d) return undefined;
  }
}

/** Variables whose paths a dynamic loader or an interpreter loads code from at start. */
const LOADER_VARIABLES = [
  'LD_PRELOAD',
  'LD_LIBRARY_PATH',
  'LD_AUDIT',
  'GCONV_PATH',
  'NODE_PATH',
  'PYTHONPATH',
  'PYTHONSTARTUP',
  'PYTHONHOME',
  'PYTHONUSERBASE',
  'PERL5LIB',
  'PERLLIB',
  'PERL5OPT',
  'RUBYLIB',
  'RUBYOPT',
  'CLASSPATH',
  'JAVA_TOOL_OPTIONS',
  'JDK_JAVA_OPTIONS',
  '_JAVA_OPTIONS',
  'BASH_ENV',
  'ENV',
];

/** The paths those variables name (split at `:` and white space), absolute. */
function loaderPaths(env: Env, cwd: string): string[] {
  const out: string[] = [];
  for (const name of LOADER_VARIABLES) {
    for (const word of (env[name] ?? '').split(/[:\s]+/)) {
      if (word !== '' && !word.startsWith('-')) out.push(resolve(cwd, word));
    }
  }
  return out;
}
