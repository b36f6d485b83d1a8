/** rootsctl's entry: parse the command line, look the command up, run it, return its exit code. */
import { parseArgs } from 'node:util';
import { RootsError } from '../common/errors.js';
import { packageVersion } from '../common/package-info.js';
import { SPECS } from './commands/spec.js';
import { lookup } from './commands/table.js';
import { ctl } from './hint.js';
import { EXIT, type ExitCode, type Io } from './io.js';
import { OPTIONS, type OptionName } from './options.js';
import { quickAnswer } from './quick-answer.js';
import { closest } from '../common/levenshtein.js';
import { inLine, terminalSafe } from './terminal-text.js';
import { USAGE } from './usage.js';

/** The commands that colour what they print, and escape every name they show themselves. */
const PAINTS = new Set(['doctor']);

/** parseArgs's refusal in rootsctl's words: an unknown option, with the nearest one. */
function optionProblem(err: Error): string {
  const unknown = /Unknown option '([^']+)'/.exec(err.message)?.[1];
  if (unknown === undefined) return err.message;
  // A one-letter option is a letter away from every other: only long ones are suggested.
  const near = unknown.startsWith('--')
    ? closest(
        unknown,
        Object.keys(OPTIONS).map((name) => `--${name}`),
      )
    : undefined;
  return `unknown option ${unknown}${near === undefined ? '' : ` (did you mean ${near}?)`}`;
}

/** A command's line in the help (`list SERVER`), or its name alone. */
function synopsis(command: string): string {
  const line = USAGE.split('\n').find((l) => l.startsWith(`  ${command} `));
  return line?.trim().split(/\s{2,}/)[0] ?? command;
}

function usageError(io: Io, message: string): ExitCode {
  io.err(`rootsctl: ${inLine(message)}\nRun \`${ctl(io, '--help')}\` for the commands.\n`);
  return EXIT.usage;
}

/** Run rootsctl with `argv` (without node and the script) against `io`. */
export async function main(argv: string[], given: Io): Promise<ExitCode> {
  // Names from the filesystem and the daemon reach the terminal only escaped (terminal-text.ts).
  const io = terminalSafe(given);
  // `--version` or `--help` alone: the text the executable gives before it loads a command.
  const quick = quickAnswer(argv);
  if (quick !== undefined) {
    io.out(quick);
    return EXIT.ok;
  }
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    return usageError(io, optionProblem(err as Error));
  }
  const opts = parsed.values;
  const [command, ...args] = parsed.positionals;
  if (opts.help || command === 'help') {
    io.out(USAGE);
    return EXIT.ok;
  }
  if (opts.version && command === undefined) {
    io.out(`${packageVersion()}\n`);
    return EXIT.ok;
  }
  if (command === undefined) {
    io.err(USAGE);
    return EXIT.usage;
  }
  const spec = lookup(command);
  if (!spec) {
    const near = closest(command, Object.keys(SPECS));
    return usageError(
      io,
      `unknown command "${command}"${near === undefined ? '' : ` (did you mean "${near}"?)`}`,
    );
  }
  const [min, max] = spec.args;
  if (args.length < min || args.length > max) {
    const takes = `${min === max ? min : `${min} to ${max}`} argument${max === 1 ? '' : 's'}`;
    return usageError(
      io,
      `${command} takes ${takes}, got ${args.length}: ${ctl(io, synopsis(command))}`,
    );
  }
  for (const key of Object.keys(opts) as OptionName[]) {
    if (key !== 'help' && !spec.options.includes(key))
      return usageError(io, `--${key} does not apply to ${command}`);
  }
  try {
    const handler = await spec.load();
    return await handler(PAINTS.has(command) ? terminalSafe(given, true) : io, args, opts);
  } catch (err) {
    return reportError(io, err);
  }
}

/**
 * One line on stderr for any failure (and one for its hint); exit 3 when the daemon cannot be
 * reached. A message may quote a path or a daemon's words: it stays on its line.
 */
export function reportError(io: Io, err: unknown): ExitCode {
  if (err instanceof RootsError) {
    io.err(
      `rootsctl: ${inLine(err.message)}\n${err.hint && !err.message.includes(err.hint) ? `${inLine(err.hint)}\n` : ''}`,
    );
    if (err.code === 'DAEMON_UNREACHABLE' || err.code === 'SOCKET_DIR_UNSAFE')
      return EXIT.unreachable;
    if (err.code === 'USAGE') return EXIT.usage;
    return EXIT.fail;
  }
  // Not an error rootsctl made: a bug, or an answer this rootsctl does not understand.
  io.err(
    `rootsctl: ${inLine(err instanceof Error ? err.message : String(err))}\n` +
      `This is not an answer rootsctl expected: if mcp-rootsd is another version than rootsctl (${inLine(packageVersion())}), restart it; \`rootsctl doctor\` checks the setup.\n`,
  );
  return EXIT.fail;
}
