/**
 * `rootsctl status` as the person who started the daemon can run it (`node dist/cli/main.js` in a
 * clone), with `--socket` when the daemon's is not the one rootsctl finds by itself: for the
 * daemon's own lines that point to it (`ask it: …`, an invalid policy's "and N more").
 */
import { relative } from 'node:path';
import { commandOf, withSocket } from '../common/command-line.js';
import { resolveSocketPath } from '../protocol/socket-path.js';

export function statusCommand(
  socket: string,
  at: { env: Record<string, string | undefined>; uid: number; cwd: string },
): string {
  const usual = resolveSocketPath({ env: at.env, uid: at.uid });
  const near = relative(at.cwd, socket);
  const shown = near.startsWith('..') ? socket : near;
  const ctl = commandOf('rootsctl', { env: at.env, cwd: at.cwd });
  return `${withSocket(ctl, socket === usual ? undefined : shown)} status`;
}
