/** The checks on one call's path values; every decision comes from the daemon's `roots/check`. */
import type { Access, CheckResult, RefusalKind } from '../common/types.js';
import { throwIfCancelled } from './abortable.js';
import type { ArgumentRefusal, PathValue } from './arguments.js';
import { fileUriPath, isFileUri } from './file-uri.js';
import { MAX_PATH_BYTES } from '../common/linux-limits.js';
import { cutWhole, hasLoneSurrogate } from '../common/well-formed.js';

/** Why one path of a call was refused. */
export interface Refusal {
  path: string;
  reason: string;
  /**
   * The daemon's refusal: the local path it judged, why it refused, and the canonical path it
   * decided on (absent for a bad value; `canonical` also from a daemon that does not say it).
   */
  checked?: {
    local: string;
    access: Access;
    refusal: RefusalKind | undefined;
    canonical: string | undefined;
  };
}

/** Asks the daemon; throws when the daemon cannot answer. */
export type Checker = (path: string, access: Access) => Promise<CheckResult>;

/** A value this long is no path or URI of one, even percent-encoded: refused before parsing. */
export const MAX_VALUE_BYTES = 3 * MAX_PATH_BYTES + 64;
/** How many paths one call may ask the daemon about. */
export const MAX_PATHS_PER_CALL = 1000;
/** How many bytes of paths one call may ask the daemon about. */
export const MAX_PATH_BYTES_PER_CALL = 256 * 1024;

const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;

// eslint-disable-next-line no-control-regex -- control characters are what this looks for
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** `%2e`, `%2f`, `%5c`, `%00` in any case: what a server that decodes a path would split on. */
const ENCODED_DOT_OR_SEPARATOR = /%(2e|2f|5c|00)/i;

/** A path or URI as a refusal shows it: quoted and escaped if it has control characters, cut if long. */
export function showPath(path: string): string {
  const cut = path.length > 256 ? `${cutWhole(path, 200)}…(${byteLength(path)} bytes)` : path;
  return CONTROL.test(cut) ? JSON.stringify(cut) : cut;
}

/**
 * Where in the arguments a value stands, as a refusal names it: member names are the caller's,
 * of any length, and a refusal too long for the decision log was not recorded (an attacker pass).
 */
function showWhere(where: string): string {
  return where.length > 200 ? `${cutWhole(where, 160)}…` : where;
}

function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/**
 * Why `path` is not a path the proxy will ask about, or undefined. Beyond relative paths, `~`,
 * `..` and NUL, each refusal is a spelling that one server reads as another path than the daemon
 * would check: white space it trims, a backslash or an escape it decodes into a separator or `..`.
 */
export function shapeProblem(path: string): string | undefined {
  const ask = 'give an absolute path, without `~` or `..`';
  const shown = showPath(path);
  if (path === '') return `"" is an empty path; ${ask}`;
  if (path.startsWith('~')) return `${shown} starts with ~; ${ask}`;
  if (!path.startsWith('/')) return `${shown} is a relative path; ${ask}`;
  if (path.includes('\0')) return `${shown} contains a NUL byte`;
  if (hasLoneSurrogate(path)) {
    // Quoted, so that the half shows as `\udXXX`; cut as `showPath` cuts.
    const quoted = JSON.stringify(path.length > 256 ? `${cutWhole(path, 200)}…` : path);
    return `${quoted} has half of a UTF-16 pair, which is no character: the daemon would check U+FFFD where a Python server opens a raw byte; give the path as it is on disk`;
  }
  const bytes = byteLength(path);
  if (bytes > MAX_PATH_BYTES) {
    return `${shown} is longer than Linux's PATH_MAX (${MAX_PATH_BYTES} bytes), so no server can open it (ENAMETOOLONG)`;
  }
  // eslint-disable-next-line no-control-regex -- U+001C to U+001F are white space to Python
  if (/[\s\u0085\u001c-\u001f]$/.test(path)) {
    return `${shown} ends with white space, which a server may trim; ${ask}`;
  }
  if (path.split('/').includes('..')) return `${shown} has a .. segment; ${ask}`;
  if (path.includes('\\')) {
    return `${shown} has a backslash, which some servers read as a separator; on Linux, give a path with / only`;
  }
  if (ENCODED_DOT_OR_SEPARATOR.test(path)) {
    return `${shown} has %2e, %2f, %5c or %00, which a server that decodes paths reads as ., /, \\ or NUL; give the path as it is on disk`;
  }
  return undefined;
}

/**
 * The filesystem path a value names, a refusal for a value that names one badly, or undefined for a
 * value that is not a local path at all (a non-`file:` URI where a URI is taken).
 */
export function toLocalPath(value: string, isUri: boolean): { path: string } | Refusal | undefined {
  if (isFileUri(value)) {
    const parsed = fileUriPath(value);
    if ('problem' in parsed) {
      return {
        path: value,
        reason: `${showPath(value)} is not a valid file URI for mcp-roots-proxy: it ${parsed.problem}`,
      };
    }
    // A server reads a URI in an argument that takes a path as a relative path (the filesystem
    // server resolves it under its first root), not as the file the URI names.
    if (!isUri) {
      return {
        path: value,
        reason: `${showPath(value)} is a file URI where a path is expected; give ${showPath(parsed.path)}`,
      };
    }
    return { path: parsed.path };
  }
  if (isUri && SCHEME.test(value)) return undefined;
  return { path: value };
}

/** The local path of one value, or why it is refused before the daemon is asked. */
function prepare(v: PathValue): { path: string } | Refusal | undefined {
  if (byteLength(v.value) > MAX_VALUE_BYTES) {
    return {
      path: v.value,
      reason: `${showPath(v.value)} (argument ${showWhere(v.where)}) is longer than any path Linux opens (PATH_MAX is ${MAX_PATH_BYTES + 1} bytes, ENAMETOOLONG)`,
    };
  }
  const local = toLocalPath(v.value, v.uri);
  if (local === undefined || 'reason' in local) return local;
  const problem = shapeProblem(local.path);
  if (problem !== undefined)
    return { path: v.value, reason: `${problem} (argument ${showWhere(v.where)})` };
  return local;
}

/** Why a call with these values costs more than one call may, or undefined. */
function costProblem(values: PathValue[]): Refusal | undefined {
  if (values.length > MAX_PATHS_PER_CALL) {
    return {
      path: 'arguments',
      reason: `they hold ${values.length} paths; mcp-roots-proxy checks at most ${MAX_PATHS_PER_CALL} in one call: split the call`,
    };
  }
  const total = values.reduce((n, v) => n + byteLength(v.value), 0);
  if (total > MAX_PATH_BYTES_PER_CALL) {
    return {
      path: 'arguments',
      reason: `their paths total ${total} bytes; mcp-roots-proxy checks at most ${MAX_PATH_BYTES_PER_CALL} bytes of paths in one call: split the call`,
    };
  }
  return undefined;
}

/**
 * Check every value: first the shapes and the call's cost (no daemon needed), then each path with
 * the daemon. The first refusal, or undefined when all are allowed. Once `signal` aborts (the host
 * cancelled the call), no further path is asked about: `CallCancelled` is thrown.
 */
export async function checkValues(
  values: PathValue[] | ArgumentRefusal,
  access: Access,
  check: Checker,
  signal?: AbortSignal,
): Promise<Refusal | undefined> {
  if (!Array.isArray(values)) return values;
  const cost = costProblem(values);
  if (cost !== undefined) return cost;
  const asks: { value: string; path: string }[] = [];
  for (const v of values) {
    const local = prepare(v);
    if (local === undefined) continue;
    if ('reason' in local) return local;
    asks.push({ value: v.value, path: local.path });
  }
  for (const { value, path } of asks) {
    throwIfCancelled(signal);
    const result = await check(path, access);
    if (!result.allowed) {
      // The daemon's reason names the path as it is; escape it here too.
      const reason = CONTROL.test(path)
        ? result.reason.split(path).join(showPath(path))
        : result.reason;
      return {
        path: value,
        reason,
        checked: {
          local: path,
          access: result.access,
          refusal: result.refusal,
          canonical: typeof result.canonical === 'string' ? result.canonical : undefined,
        },
      };
    }
  }
  return undefined;
}
