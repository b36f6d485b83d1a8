/**
 * rootsctl as the person who started the daemon can run it (`node dist/cli/main.js` in a clone),
 * with `--socket` when the daemon's is not the one rootsctl finds by itself: for the daemon's own
 * lines that point to it (`ask it: …`, an invalid policy's "and N more"), and for the messages it
 * sends (lockdown's `unlock`), which a host's log shows far from the daemon's directory.
 */
import { relative } from 'node:path';
import { commandOf, withSocket } from '../common/command-line.js';
import { resolveSocketPath } from '../protocol/socket-path.js';

/**
 * rootsctl with `--socket` when needed; the file and the socket relative to `cwd` when given and
 * inside it, absolute otherwise (a message read where the daemon's directory means nothing).
 */
export function rootsctlCommand(
  socket: string,
  at: { env: Record<string, string | undefined>; uid: number; cwd?: string },
): string {
  const usual = resolveSocketPath({ env: at.env, uid: at.uid });
  const near = at.cwd === undefined ? '..' : relative(at.cwd, socket);
  const shown = near.startsWith('..') ? socket : near;
  const ctl = commandOf('rootsctl', { env: at.env, cwd: at.cwd });
  return withSocket(ctl, socket === usual ? undefined : shown);
}

/** `rootsctl status`, as `rootsctlCommand` names rootsctl. */
export function statusCommand(
  socket: string,
  at: { env: Record<string, string | undefined>; uid: number; cwd: string },
): string {
  return `${rootsctlCommand(socket, at)} status`;
}
