import { lstatSync, type Stats } from 'node:fs';
/** The string codes every mcp-roots error carries, on the wire and in process. */
export type ErrorCode =
  | 'POLICY_INVALID'
  | 'POLICY_NOT_FOUND'
  | 'PATH_NOT_FOUND'
  | 'PATH_INVALID'
  | 'GRANT_DENIED'
  | 'LOCKDOWN'
  | 'SERVER_NAME_INVALID'
  | 'DAEMON_UNREACHABLE'
  | 'DAEMON_RUNNING'
  | 'SOCKET_PATH_TOO_LONG'
  | 'SOCKET_DIR_UNSAFE'
  | 'STATE_DIR_UNSAFE'
  | 'PROTOCOL'
  | 'TIMEOUT'
  | 'USAGE'
  | 'INTERNAL';

/** One error class for the whole project: a code, a message that says what to do, an optional hint. */
export class RootsError extends Error {
  readonly code: ErrorCode;
  readonly hint: string | undefined;

  constructor(code: ErrorCode, message: string, options: { hint?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RootsError';
    this.code = code;
    this.hint = options.hint;
  }
}

/** The errno code of a Node system error, or undefined. */
export function errnoCode(err: unknown): string | undefined {
  if (typeof err === 'object' && err !== null && 'code' in err) {
    const code = err.code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}

/**
 * `lstat`, undefined for a path that is not there, or whose parent is no longer a directory
 * (ENOTDIR, which `throwIfNoEntry: false` still throws: a watched directory replaced by a file
 * made a watch's listener throw, and the process with it).
 */
export function lstatOrNone(path: string | Buffer): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch (err) {
    // Too long a path names nothing that can be looked at either (a server made it to crash
    // whatever looked: the caller decides what "not there" means for it).
    if (errnoCode(err) === 'ENOTDIR' || errnoCode(err) === 'ENAMETOOLONG') return undefined;
    throw err;
  }
}

/** Run an fs operation and turn ENOENT/ENOTDIR (and only those) into undefined. */
export async function ignoreMissing<T>(op: Promise<T>): Promise<T | undefined> {
  try {
    return await op;
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw err;
  }
}
