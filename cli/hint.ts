/**
 * Command lines in hints and fixes, the way the person can run them: rootsctl or mcp-rootsd as the
 * person runs this installation (`Io.command`), with the `--socket` they gave, then the arguments.
 */
import { startSentence, withSocket, type Bin } from '../common/command-line.js';
import type { Io } from './io.js';

/** `bin` as the person runs it, `--socket` when given, then `args`. */
export function commandLine(io: Io, bin: Bin, args: string, socket?: string): string {
  const cmd = withSocket(io.command?.(bin) ?? bin, socket);
  return args === '' ? cmd : `${cmd} ${args}`;
}

/** `rootsctl ARGS` as the person runs it; `socket` for commands that ask the daemon. */
export function ctl(io: Io, args: string, socket?: string): string {
  return commandLine(io, 'rootsctl', args, socket);
}

/**
 * What to run when no daemon answers: the systemd socket unit (which serves the default socket
 * only) or the daemon itself, with the `--socket` the person gave.
 */
export function daemonStartHint(io: Io, socket: string | undefined): string {
  const start = startSentence({
    daemon: commandLine(io, 'mcp-rootsd', '', socket),
    rootsctl: commandLine(io, 'rootsctl', ''),
    systemd: socket === undefined,
  });
  // "Not running" reads wrong to someone whose daemon runs on a socket of its own.
  return socket === undefined
    ? `${start} A daemon started on another socket (the demo's, by \`npm start\`) is asked with that --socket.`
    : start;
}
