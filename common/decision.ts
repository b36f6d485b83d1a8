/** One line of the decision log: what the daemon decided or was told, for the person to read later. */
import type { Access } from './types.js';

/** Fields every entry has. */
interface Base {
  /** RFC 3339, UTC, with milliseconds. */
  time: string;
}

/** A `roots/check`: one path, one server, one answer. */
export interface CheckDecision extends Base {
  kind: 'check';
  server: string;
  path: string;
  access: Access;
  allowed: boolean;
  /** Why, naming the deciding rule with file:line:col where one decided. */
  reason: string;
  /** The tool and host the proxy said the check was for, when it said. */
  tool?: string;
  client?: string;
}

/** A server's list of roots changed (pushed to its subscribers, if any). */
export interface RootsDecision extends Base {
  kind: 'roots';
  server: string;
  added: string[];
  removed: string[];
  /** Roots in both lists whose access or name changed (absent when none did). */
  changed?: string[];
}

/**
 * A list's change in counts: `+2 -1`, and `~1` for roots whose access or name changed, so that a
 * root made read-only is not reported as a change of nothing (`+0 -0`).
 */
export function rootCounts(added: string[], removed: string[], changed: string[]): string {
  const counts = `+${added.length} -${removed.length}`;
  return changed.length > 0 ? `${counts} ~${changed.length}` : counts;
}

/** A temporary grant was added, revoked or expired. */
export interface GrantDecision extends Base {
  kind: 'grant-added' | 'grant-revoked' | 'grant-expired';
  server: string;
  path: string;
  readOnly?: boolean;
  expiresAt?: string;
  /** Who asked for it (`rootsctl`, `mcp-roots-proxy ask`, …), when known. */
  by?: string;
}

/** A request for a grant that was refused (lockdown, a deny, too long, a path a link changed). */
export interface GrantRefusedDecision extends Base {
  kind: 'grant-refused';
  server: string;
  /** The path as the request gave it. */
  path: string;
  reason: string;
}

/** The person was asked for access through the host, and answered (or did not). */
export interface AskDecision extends Base {
  kind: 'ask';
  server: string;
  path: string;
  access: Access;
  tool?: string;
  client?: string;
  /** `accept`, `decline`, `cancel` or `timeout`. */
  answer: string;
  /** What an accepted answer granted. */
  granted?: { path: string; readOnly: boolean; expiresAt: string };
}

/** A policy (re)load: taken, or rejected with the last good policy still serving. */
export interface PolicyDecision extends Base {
  kind: 'policy-loaded' | 'policy-rejected';
  reason: string;
  files: string[];
  /** The errors of a rejected edit, `file:line:col: message`. */
  errors?: string[];
}

/** Lockdown turned on or off. */
export interface LockdownDecision extends Base {
  kind: 'lockdown';
  on: boolean;
}

export type Decision =
  | CheckDecision
  | RootsDecision
  | GrantDecision
  | GrantRefusedDecision
  | AskDecision
  | PolicyDecision
  | LockdownDecision;

/** Every kind, for readers that must accept only what they know. */
export const DECISION_KINDS: readonly Decision['kind'][] = [
  'check',
  'roots',
  'grant-added',
  'grant-revoked',
  'grant-expired',
  'grant-refused',
  'ask',
  'policy-loaded',
  'policy-rejected',
  'lockdown',
];

/** Whether an entry records something refused (a check, a grant, or an ask not accepted). */
export function isRefusal(d: Decision): boolean {
  return (
    (d.kind === 'check' && !d.allowed) ||
    d.kind === 'grant-refused' ||
    (d.kind === 'ask' && d.answer !== 'accept')
  );
}

/** The entry without its time, as the daemon hands it to the log. */
export type DecisionInput = Decision extends infer D
  ? D extends Base
    ? Omit<D, 'time'>
    : never
  : never;
