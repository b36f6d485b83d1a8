/** The one rule for finding the daemon's socket, and the checks that keep it safe (docs/protocol.md, "Transport"). */
import { promises as fsp, statSync, type Stats } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { errnoCode, ignoreMissing, RootsError } from '../common/errors.js';
import { shellQuote } from '../common/shell-quote.js';
import { checkOwned } from './owned-path.js';
import { asyncLookups, type SocketLookups } from './socket-lookups.js';
import { crypto } from '../common/lazy-crypto.js';

/** The longest socket path Linux accepts in `sun_path`, in bytes (108 with the terminating NUL). */
export const MAX_SOCKET_PATH_BYTES = 107;

/** The environment variable that names the socket. */
export const SOCKET_ENV = 'MCP_ROOTS_SOCKET';

/** What `resolveSocketPath` looks at; everything comes in as an argument. */
export interface SocketPathInput {
  /** `--socket PATH`, when given. */
  socket?: string | undefined;
  env: Readonly<Record<string, string | undefined>>;
  uid: number;
  /** Whether a directory exists (default: `statSync`); for tests. */
  exists?: (dir: string) => boolean;
  /** Base for a relative `--socket` or `MCP_ROOTS_SOCKET` (default `process.cwd()`). */
  cwd?: string;
}

function directoryExists(dir: string): boolean {
  return statSync(dir, { throwIfNoEntry: false })?.isDirectory() ?? false;
}

/**
 * The socket path: `--socket`, else `MCP_ROOTS_SOCKET`, else `$XDG_RUNTIME_DIR/mcp-roots/rootsd.sock`,
 * else `/run/user/<uid>/mcp-roots/rootsd.sock` if `/run/user/<uid>` exists, else
 * `/tmp/mcp-roots-<uid>/rootsd.sock`. Empty values count as unset; the result is absolute.
 */
export function resolveSocketPath(input: SocketPathInput): string {
  const { env, uid } = input;
  const exists = input.exists ?? directoryExists;
  // Absolute, so that two processes started in different directories agree (and share one lock).
  const given = input.socket || env[SOCKET_ENV];
  if (given) return resolve(input.cwd ?? process.cwd(), given);
  const xdg = env.XDG_RUNTIME_DIR;
  // The XDG spec says to ignore a relative XDG_RUNTIME_DIR.
  if (xdg && isAbsolute(xdg)) return join(xdg, 'mcp-roots', 'rootsd.sock');
  const runUser = `/run/user/${uid}`;
  if (exists(runUser)) return join(runUser, 'mcp-roots', 'rootsd.sock');
  return `/tmp/mcp-roots-${uid}/rootsd.sock`;
}

/** Throw `SOCKET_PATH_TOO_LONG` for a path that does not fit in `sun_path` (Node would cut it silently). */
export function checkSocketPathLength(path: string): void {
  const bytes = Buffer.byteLength(path, 'utf8');
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    throw new RootsError(
      'SOCKET_PATH_TOO_LONG',
      `socket path ${path} is ${bytes} bytes long; a Unix socket path may have at most ${MAX_SOCKET_PATH_BYTES}. Choose a shorter --socket (or ${SOCKET_ENV}).`,
      { hint: `choose a shorter --socket (or ${SOCKET_ENV})` },
    );
  }
}

/** The socket directory's check: a directory of the user's own that nobody else can write. */
function checkStats(dir: string, st: Stats, uid: number): void {
  checkOwned(dir, st, uid, {
    kind: 'directory',
    chmod: '700',
    shared: `Give the socket a directory of its own there (mcp-rootsd creates it, mode 0700): --socket ${shellQuote(join(dir, `mcp-roots-${uid}`, 'rootsd.sock'))}`,
    unsafe: (what, fix) =>
      new RootsError(
        'SOCKET_DIR_UNSAFE',
        `the socket directory ${dir} is unsafe: ${what}, so another local user could plant a fake daemon there. ${fix}, or choose another --socket.`,
        { hint: fix },
      ),
  });
}

/** For the daemon: create `dir` (mode 0700, with parents) if needed, then refuse it unless it is safe. */
export async function ensureSocketDir(dir: string, uid: number): Promise<void> {
  try {
    await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    // Something that is not a directory is in the way: lstat below says what it is.
    if (errnoCode(err) !== 'EEXIST') {
      throw new RootsError(
        'SOCKET_DIR_UNSAFE',
        `cannot create the socket directory ${dir} (${errnoCode(err) ?? String(err)}). Choose another --socket.`,
        { cause: err },
      );
    }
  }
  checkStats(dir, await fsp.lstat(dir), uid);
}

/**
 * For clients, before connecting: refuse `dir` unless it is a real directory owned by `uid` and not
 * group- or world-writable. A missing directory passes: the connect then fails as "not running".
 * `lookups`: blocking calls for a one-shot command (socket-lookups.ts).
 */
export async function checkSocketDir(
  dir: string,
  uid: number,
  lookups: SocketLookups = asyncLookups,
): Promise<void> {
  const st = await ignoreMissing(lookups.lstat(dir));
  if (st !== undefined) checkStats(dir, st, uid);
}

/**
 * The abstract socket name that serves as the daemon's lock for `socketPath`:
 * `\0mcp-roots/<uid>/<sha256 hex>`. Abstract names carry no permissions, so the daemon mixes in
 * a `token` kept in its 0700 socket directory: another user cannot know the name to take it first.
 */
export function lockName(socketPath: string, uid: number, token = ''): string {
  const digest = crypto()
    .createHash('sha256')
    .update(token === '' ? socketPath : `${socketPath}\0${token}`)
    .digest('hex');
  return `\0mcp-roots/${uid}/${digest}`;
}
