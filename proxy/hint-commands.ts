/**
 * How the proxy's messages (refusals, warnings, the host's log) name rootsctl and mcp-rootsd: as the
 * person can run them (common/command-line.ts), with the proxy's `--socket` when it was given one.
 * A host's working directory means nothing to the person, so paths are absolute.
 */
import { resolve } from 'node:path';
import { commandOf, startSentence, startWith, withSocket } from '../common/command-line.js';

export interface HintCommands {
  /** `rootsctl`, or `node /path/to/dist/cli/main.js`, with `--socket`. */
  rootsctl: string;
  /** The same without `--socket`, for the commands that read the policy file and refuse it (`edit`). */
  rootsctlFile: string;
  /** `mcp-rootsd`, or `node /path/to/dist/daemon/main.js`, with `--socket`. */
  daemon: string;
  /** Whether the systemd socket unit is worth naming (it serves the default socket only). */
  systemd: boolean;
}

/** The bare names, for a link that knows nothing of how it was started (the library). */
export const BARE_COMMANDS: HintCommands = {
  rootsctl: 'rootsctl',
  rootsctlFile: 'rootsctl',
  daemon: 'mcp-rootsd',
  systemd: true,
};

/**
 * The commands for a proxy started with `env` and `--socket given`: a relative socket is named
 * from `cwd`, the proxy's directory, which the person reading a host's log does not know.
 */
export function hintCommands(
  env: Readonly<Record<string, string | undefined>>,
  given: string | undefined,
  cwd = process.cwd(),
): HintCommands {
  const socket = given === undefined ? undefined : resolve(cwd, given);
  return {
    rootsctl: withSocket(commandOf('rootsctl', { env }), socket),
    rootsctlFile: commandOf('rootsctl', { env }),
    daemon: withSocket(commandOf('mcp-rootsd', { env }), socket),
    systemd: socket === undefined,
  };
}

/** The sentence an unreachable-daemon error ends with (common/command-line.ts). */
export function startHint(c: HintCommands): string {
  return startSentence(c);
}

/** What a refusal says while mcp-rootsd is away, and how to bring it back (README, Troubleshooting). */
export function daemonAwayHint(c: HintCommands): string {
  return `every call with a path is refused until mcp-rootsd answers (start it with ${startWith(c)})`;
}
