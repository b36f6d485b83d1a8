/** The checks on one call's path arguments; every decision comes from the daemon's `roots/check`. */
import { fileURLToPath } from 'node:url';
import type { Access, CheckResult, RefusalKind } from '../common/types.js';
import type { PathArgument } from './tool-table.js';

/** Why one path of a call was refused. */
export interface Refusal {
  path: string;
  reason: string;
  /** The daemon's refusal: the local path it judged and why it refused (absent for a bad value). */
  checked?: { local: string; access: Access; refusal: RefusalKind | undefined };
}

/** Asks the daemon; throws when the daemon cannot answer. */
export type Checker = (path: string, access: Access) => Promise<CheckResult>;

const SCHEME = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;

// eslint-disable-next-line no-control-regex -- control characters are what this looks for
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A path or URI as a refusal shows it: quoted and escaped (`JSON.stringify`) if it has control characters. */
export function showPath(path: string): string {
  return CONTROL.test(path) ? JSON.stringify(path) : path;
}

/** Why `path` is not a path the proxy will ask about (relative, `~`, `..`), or undefined. */
export function shapeProblem(path: string): string | undefined {
  const ask = 'give an absolute path, without `~` or `..`';
  const shown = showPath(path);
  if (path.startsWith('~')) return `${shown} starts with ~; ${ask}`;
  if (!path.startsWith('/')) return `${shown} is a relative path; ${ask}`;
  if (path.split('/').includes('..')) return `${shown} has a .. segment; ${ask}`;
  if (path.includes('\0')) return `${shown} contains a NUL byte`;
  return undefined;
}

/**
 * The filesystem path a value names, a refusal for a value that names one badly, or undefined for a
 * value that is not a local path at all (a non-`file:` URI in a `format: uri` argument).
 */
export function toLocalPath(value: string, isUri: boolean): { path: string } | Refusal | undefined {
  if (/^file:/i.test(value)) {
    let path: string;
    try {
      path = fileURLToPath(value);
    } catch (err) {
      return {
        path: value,
        reason: `${showPath(value)} is not a valid file URI (${(err as Error).message})`,
      };
    }
    // A server reads a URI in an argument that takes a path as a relative path (the filesystem
    // server resolves it under its first root), not as the file the URI names.
    if (!isUri) {
      return {
        path: value,
        reason: `${showPath(value)} is a file URI where a path is expected; give ${showPath(path)}`,
      };
    }
    return { path };
  }
  if (isUri && SCHEME.test(value)) return undefined;
  return { path: value };
}

/** The values of the path arguments present in `args`, in order. */
export function pathValues(
  args: Record<string, unknown>,
  paths: PathArgument[],
): [string, boolean][] {
  const out: [string, boolean][] = [];
  for (const p of paths) {
    const v = args[p.name];
    if (typeof v === 'string') out.push([v, p.uri]);
    else if (Array.isArray(v)) for (const s of v) if (typeof s === 'string') out.push([s, p.uri]);
  }
  return out;
}

/** Check every value; the first refusal, or undefined when all are allowed. */
export async function checkValues(
  values: [string, boolean][],
  access: Access,
  check: Checker,
): Promise<Refusal | undefined> {
  for (const [value, isUri] of values) {
    const local = toLocalPath(value, isUri);
    if (local === undefined) continue;
    if ('reason' in local) return local;
    const problem = shapeProblem(local.path);
    if (problem !== undefined) return { path: value, reason: problem };
    const result = await check(local.path, access);
    if (!result.allowed) {
      // The daemon's reason names the path as it is; escape it here too.
      const reason = CONTROL.test(local.path)
        ? result.reason.split(local.path).join(showPath(local.path))
        : result.reason;
      return {
        path: value,
        reason,
        checked: { local: local.path, access: result.access, refusal: result.refusal },
      };
    }
  }
  return undefined;
}
