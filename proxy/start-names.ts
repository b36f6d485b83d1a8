/**
 * What a server's start names, read as Node and the loaders read it: the files its command line
 * and `NODE_OPTIONS` name, and the paths its environment gives the loaders (`LD_PRELOAD`,
 * `NODE_PATH` ...), an `--env-file`'s variables included. program-writers.ts checks each against
 * what other servers may write. A data file named there counts too: what a program reads at start
 * (a config, an env file) steers what it runs.
 */
import { open, stat } from 'node:fs/promises';
import { constants } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

type Env = Readonly<Record<string, string | undefined>>;

export interface StartNames {
  /** Files (or a package's directory) that the start loads or reads, absolute. */
  files: string[];
  /** Paths the loaders look in or load, absolute: files or directories. */
  loaderPaths: string[];
}

/** Options whose value Node loads (a bare name through `node_modules`, as `require` does). */
const LOADING = new Set(['-r', '--require', '--import', '--loader', '--experimental-loader']);
/** As Node completes `--require FILE`: with an extension, or a directory's index. */
const NODE_SUFFIXES = ['.js', '.cjs', '.mjs', '.json', '.node', '/index.js', '/index.cjs'];
/** An env file larger than this is not read (Node reads it whole at every start). */
const ENV_FILE_MAX = 1 << 20;

export async function startNames(
  args: readonly string[],
  env: Env,
  cwd: string,
): Promise<StartNames> {
  const words = [...args, ...nodeOptionsWords(env.NODE_OPTIONS)];
  const files: string[] = [];
  /** Variables set by env files, which Node applies as the environment's. */
  const fileEnv: Record<string, string> = {};
  /** Env files read: each once, so that one naming itself ends. */
  const read = new Set<string>();
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    const eq = word.startsWith('-') ? word.indexOf('=') : -1;
    const option = eq > 0 ? word.slice(0, eq) : words[i - 1];
    const value = eq > 0 ? word.slice(eq + 1) : word;
    const path = asPath(value, cwd);
    if (path === undefined) continue;
    const found = await firstPresent([path, ...NODE_SUFFIXES.map((x) => path + x)]);
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
  return { files, loaderPaths: [...loaderPaths(env, cwd), ...loaderPaths(fileEnv, cwd)] };
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
  let text: string;
  const fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => undefined);
  if (fh === undefined) return {};
  try {
    const st = await fh.stat();
    if (!st.isFile() || st.size > ENV_FILE_MAX) return {};
    text = await fh.readFile('utf8');
  } catch {
    return {};
  } finally {
    await fh.close();
  }
  const vars: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/.exec(line);
    if (!m) continue;
    const raw = m[2]!;
    const quote = /^["'`]/.exec(raw)?.[0];
    const close = quote === undefined ? -1 : raw.indexOf(quote, 1);
    vars[m[1]!] =
      quote !== undefined && close > 0 ? raw.slice(1, close) : raw.replace(/\s+#.*$/, '').trim();
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
  'NODE_PATH',
  'PYTHONPATH',
  'PYTHONSTARTUP',
  'PYTHONHOME',
  'PERL5LIB',
  'PERL5OPT',
  'RUBYLIB',
  'RUBYOPT',
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
