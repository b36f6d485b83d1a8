/**
 * What a grants file may say. The daemon writes it (daemon/grants.ts) with one shape only: exact
 * server names, each with roots that have an absolute canonical path and an expiry at most
 * `MAX_GRANT_SECONDS` away. Anything else in it (a deny, a tool rule, a sandbox, a glob, a grant
 * for 2099) was not written by a grant, so it is an error, and the file grants nothing.
 */
import { isGlob } from '../common/glob-dialect.js';
import { isInsideOrEqual } from '../common/segments.js';
import type { PolicyError } from '../common/types.js';
import type { ParsedPolicyFile, Pos } from './model.js';
import { normalizeLexically } from './paths.js';
import { hasWildcard } from './server-pattern.js';

/** Longer access belongs in the policy file: forever is not a grant. */
export const MAX_GRANT_SECONDS = 30 * 86400;

/** A clock set back after a grant was made must not turn that grant into an error. */
const CLOCK_SLACK_MS = 86400 * 1000;

const PUT_IT = 'put lasting access in the policy file, and change grants with rootsctl grant';

/** The errors of a parsed grants file, judged at `now` (ms since the epoch). */
export function grantsShapeErrors(file: ParsedPolicyFile, now: number): PolicyError[] {
  const errors: PolicyError[] = [];
  const add = (pos: Pos, message: string) =>
    errors.push({ file: pos.file, line: pos.line, column: pos.column, message });
  if (file.deny.length > 0) add(file.deny[0]!.pos, `a grants file holds no deny; ${PUT_IT}`);
  for (const block of file.servers) {
    const extra = [
      block.deny.length > 0 && 'deny',
      Object.keys(block.tools).length > 0 && 'tools',
      block.launch !== undefined && 'launch',
      block.sandbox !== undefined && 'sandbox',
      block.readOnly !== undefined && 'readOnly',
      block.ask !== undefined && 'ask',
    ].filter((k): k is string => k !== false);
    if (extra.length > 0) {
      add(block.pos, `a grant holds roots only, not ${extra.join(', ')}; ${PUT_IT}`);
    }
    if (hasWildcard(block.pattern)) {
      add(block.pos, `a grant names one server exactly; "${block.pattern}" has a *; ${PUT_IT}`);
    }
    for (const root of block.roots) {
      const { path } = root;
      if (!path.startsWith('/') || normalizeLexically(path) !== path || path.includes('$')) {
        // `$` starts a variable, which the daemon never writes (grants/add refuses it): checked
        // as written, `/$P/self` would pass, and be /proc/self once expanded.
        add(root.pathPos, `a grant's path is absolute and canonical; "${path}" is not; ${PUT_IT}`);
      } else if (isInsideOrEqual(path, '/proc')) {
        add(root.pathPos, `${path} is under /proc, which no grant may name; ${PUT_IT}`);
      } else if (isGlob(path)) {
        // Taken literally only while such a directory exists: gone, it would match others.
        add(root.pathPos, `a grant's path is no pattern; "${path}" reads as one; ${PUT_IT}`);
      }
      if (root.kind !== undefined) add(root.pos, `a grant holds no kind; ${PUT_IT}`);
      if (root.expires === undefined) {
        add(root.pos, `a grant has an expires; ${PUT_IT}`);
      } else if (root.expires - now > MAX_GRANT_SECONDS * 1000 + CLOCK_SLACK_MS) {
        add(
          root.pos,
          `a grant may last at most ${MAX_GRANT_SECONDS / 86400} days; this one ends ${new Date(root.expires).toISOString()}; ${PUT_IT}`,
        );
      }
    }
  }
  return errors;
}
