/**
 * What every command that shows roots says when the daemon's state changes what it shows: during
 * lockdown, so that an empty list (or roots the policy gives but no server gets) comes with its
 * reason and the way out; and while the policy on disk is refused, so that someone who has just
 * edited it does not take the last valid policy's roots for the edit's.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { stateDir, tildify, homeDir } from '../common/locations.js';
import type { RootsClient } from '../protocol/client.js';
import { ctl } from './hint.js';
import type { Io } from './io.js';
import type { Options } from './options.js';
import { inLine } from './terminal-text.js';

/** The line for a daemon in lockdown. */
export function lockdownLine(io: Io, socket: string | undefined): string {
  return `LOCKDOWN: mcp-rootsd gives every server no roots and refuses every access; \`${ctl(io, 'unlock', socket)}\` ends it.\n`;
}

/** The running daemon's lockdown line and refused-policy line, each only when it applies. */
export async function daemonStateNotes(
  io: Io,
  client: RootsClient,
  socket: string | undefined,
): Promise<string> {
  const { lockdown, policy, stateDirProblem } = await client.status();
  // A state directory the daemon no longer uses (an addition) fails its grants file with the
  // same words: said as what it is, once.
  const stateDir = typeof stateDirProblem === 'string' ? stateDirProblem : undefined;
  const unused =
    stateDir !== undefined
      ? `NOTE: mcp-rootsd no longer uses its state directory (removed or replaced), so no grants serve until it restarts; \`${ctl(io, 'status', socket)}\` says more.\n`
      : '';
  const errors = policy.errors.filter((e) => e.message !== stateDir);
  // The grants file fails closed (daemon/state.ts): its errors mean no grants, not old ones.
  const inGrants = errors.filter((e) => e.file === policy.grants).length;
  const n = errors.length - inGrants;
  const shows = (k: number) => `\`${ctl(io, 'status', socket)}\` shows ${k === 1 ? 'it' : 'them'}`;
  // No file in force at all is another answer (backend.ts `noPolicy`).
  const refused =
    n > 0 && policy.files.length > 0
      ? `NOTE: the policy on disk has ${n} error${n === 1 ? '' : 's'}, so mcp-rootsd keeps serving the last valid policy, which this answer is from; ${shows(n)}.\n`
      : '';
  const noGrants =
    inGrants > 0
      ? `NOTE: the grants file has ${inGrants} error${inGrants === 1 ? '' : 's'}, so none of its grants serve; ${shows(inGrants)}.\n`
      : '';
  return (lockdown ? lockdownLine(io, socket) : '') + refused + noGrants + unused;
}

/**
 * For a policy evaluated offline (`--config`): the daemon's lockdown lives in the state directory,
 * so the roots shown are what the policy gives once it ends, not what any server gets now.
 */
export function offlineLockdown(io: Io, opts: Options): string {
  const file = join(stateDir(io.env, io.cwd, opts['state-dir']), 'lockdown');
  if (!existsSync(file)) return '';
  return `LOCKDOWN (${inLine(tildify(file, homeDir(io.env)))}): mcp-rootsd gives every server no roots; what follows is what this policy gives once \`${ctl(io, 'unlock')}\` ends it.\n`;
}

/** Show `note` with an answer: before the table, or on stderr beside JSON (which stays as it is). */
export function showNote(io: Io, json: boolean, note: string): void {
  if (note === '') return;
  if (json) io.err(`rootsctl: ${note}`);
  else io.out(note);
}
