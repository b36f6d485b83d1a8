/**
 * How a person runs one of this installation's commands from where they are, for the commands
 * that hints and fixes show: `rootsctl` when that name on `PATH` is this installation's (after
 * `npm install -g .`), `npx rootsctl` under `npm exec` in the person's own directory, else `node` and the built file, relative
 * to the working directory when it is inside it (`node dist/cli/main.js`, the README's Quick
 * start), absolute otherwise. Looked up only when a hint is printed: it costs a few `stat`s.
 */
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, isAbsolute, join, relative, sep } from 'node:path';
import { packageRoot } from './package-info.js';
import { shellQuote } from './shell-quote.js';

export type Bin = 'rootsctl' | 'mcp-rootsd' | 'mcp-roots-proxy';

/**
 * Each command's built file, the first that exists. rootsctl's is `dist/cli/rootsctl.cjs`, the
 * daemon's `dist/daemon/mcp-rootsd.cjs` and the proxy's `dist/proxy/mcp-roots-proxy.cjs` (the bins); a clone's build links `main.js`, the
 * README's name, to each, and npm leaves links out of a package, so an installed copy has only
 * the `.cjs`.
 */
const ENTRY: Record<Bin, readonly string[]> = {
  rootsctl: ['dist/cli/main.js', 'dist/cli/rootsctl.cjs'],
  'mcp-rootsd': ['dist/daemon/main.js', 'dist/daemon/mcp-rootsd.cjs'],
  'mcp-roots-proxy': ['dist/proxy/main.js', 'dist/proxy/mcp-roots-proxy.cjs'],
};

function entryOf(bin: Bin): string {
  const files = ENTRY[bin].map((rel) => join(packageRoot(), rel));
  return files.find((f) => existsSync(f)) ?? files[0]!;
}

/** Where the person stands: their environment, and their working directory when they have one here. */
export interface Whereabouts {
  env: Readonly<Record<string, string | undefined>>;
  /** Undefined for a process whose working directory the person does not know (a host's proxy). */
  cwd?: string | undefined;
}

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** Whether `bin` found on `PATH` is this installation's own file. */
function onPath(bin: Bin, path: string | undefined, entry: string): boolean {
  const target = real(entry);
  if (target === undefined || path === undefined) return false;
  for (const dir of path.split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const found = real(join(dir, bin));
    if (found !== undefined) return found === target;
  }
  return false;
}

/** The command that runs `bin` of this installation, as the person at `at` can type it. */
export function commandOf(bin: Bin, at: Whereabouts): string {
  // npm exec puts the project's node_modules/.bin on PATH for itself, not for the person; what
  // they typed works again where they stand (a process a host started has no such place).
  if (at.env.npm_command === 'exec' && at.cwd !== undefined) return `npx ${bin}`;
  const entry = entryOf(bin);
  if (onPath(bin, at.env.PATH, entry)) return bin;
  if (at.cwd !== undefined) {
    const rel = relative(at.cwd, entry);
    if (rel !== '' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
      return `node ${shellQuote(rel)}`;
  }
  return `node ${shellQuote(entry)}`;
}

/** `command` with `--socket PATH` when one was given (a daemon other than the default one). */
export function withSocket(command: string, socket: string | undefined): string {
  return socket === undefined ? command : `${command} --socket ${shellQuote(socket)}`;
}

/**
 * The sentence an unreachable daemon's error ends with. With the default socket: the systemd
 * socket unit (once `install-service` wrote it) or the daemon. With a socket of one's own: the
 * daemon on it, which must be started as it was (its policy and state directory are not known
 * here: the demo's socket given to a bare `mcp-rootsd` would serve the user's own policy).
 */
export function startSentence(c: StartCommands): string {
  return `Start it with ${startWith(c)}.`;
}

/** How to start the daemon, as the clause after "start it with". */
export function startWith(c: StartCommands): string {
  return c.systemd
    ? `\`systemctl --user start mcp-rootsd.socket\` (once \`${c.rootsctl} install-service\` has run) or \`${c.daemon}\``
    : `\`${c.daemon}\` and the --config and --state-dir you run it with; for the demo, \`npm start\` in its repository`;
}

/** The commands a start hint names, as the person runs them. */
export interface StartCommands {
  daemon: string;
  rootsctl: string;
  /** Whether the systemd socket unit is worth naming (it serves the default socket only). */
  systemd: boolean;
}
