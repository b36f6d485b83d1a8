/** rootsctl's entry: parse the command line, run one command, return its exit code. */
import { parseArgs } from 'node:util';
import { RootsError } from '../common/errors.js';
import { offlineBackend, type Backend } from './backend.js';
import { logCommand } from './commands/log.js';
import { check, explain, list } from './commands/query.js';
import { validate } from './commands/validate.js';
import { EXIT, type ExitCode, type Io } from './io.js';
import { daemonCommand, onlineBackend } from './online.js';
import { USAGE } from './usage.js';

const OPTIONS = {
  json: { type: 'boolean' },
  config: { type: 'string' },
  socket: { type: 'string' },
  'state-dir': { type: 'string' },
  write: { type: 'boolean' },
  for: { type: 'string' },
  until: { type: 'string' },
  'read-only': { type: 'boolean' },
  name: { type: 'string' },
  force: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  server: { type: 'string' },
  refused: { type: 'boolean' },
  since: { type: 'string' },
  follow: { type: 'boolean', short: 'f' },
  help: { type: 'boolean', short: 'h' },
} as const;

type OptionName = keyof typeof OPTIONS;
export type Options = {
  [K in OptionName]?: (typeof OPTIONS)[K]['type'] extends 'string' ? string : boolean;
};

/** Each command's positional arguments (required, optional) and the options it takes. */
const COMMANDS: Record<string, { args: [number, number]; options: OptionName[] }> = {
  status: { args: [0, 0], options: ['json', 'socket'] },
  list: { args: [1, 1], options: ['json', 'socket', 'config', 'state-dir'] },
  check: { args: [2, 2], options: ['json', 'socket', 'config', 'state-dir', 'write'] },
  explain: { args: [1, 1], options: ['json', 'socket', 'config', 'state-dir'] },
  validate: { args: [0, 1], options: ['json', 'config', 'state-dir'] },
  reload: { args: [0, 0], options: ['json', 'socket'] },
  watch: { args: [1, 1], options: ['json', 'socket'] },
  grant: { args: [2, 2], options: ['json', 'socket', 'for', 'until', 'read-only', 'name'] },
  revoke: { args: [1, 2], options: ['json', 'socket'] },
  grants: { args: [0, 0], options: ['json', 'socket'] },
  lockdown: { args: [0, 0], options: ['json', 'socket'] },
  unlock: { args: [0, 0], options: ['json', 'socket'] },
  init: { args: [0, 0], options: ['force', 'config'] },
  log: { args: [0, 0], options: ['json', 'state-dir', 'server', 'refused', 'since', 'follow'] },
  'install-service': { args: [0, 0], options: ['dry-run'] },
  'uninstall-service': { args: [0, 0], options: ['dry-run'] },
};

function usageError(io: Io, message: string): ExitCode {
  io.err(`rootsctl: ${message}\nRun \`rootsctl --help\` for the commands.\n`);
  return EXIT.usage;
}

/** Run rootsctl with `argv` (without node and the script) against `io`. */
export async function main(argv: string[], io: Io): Promise<ExitCode> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    return usageError(io, (err as Error).message);
  }
  const opts = parsed.values;
  const [command, ...args] = parsed.positionals;
  if (opts.help || command === 'help') {
    io.out(USAGE);
    return EXIT.ok;
  }
  if (command === undefined) {
    io.err(USAGE);
    return EXIT.usage;
  }
  const spec = COMMANDS[command];
  if (!spec) return usageError(io, `unknown command "${command}"`);
  const [min, max] = spec.args;
  if (args.length < min || args.length > max) {
    return usageError(
      io,
      `${command} takes ${min === max ? min : `${min} to ${max}`} argument${max === 1 ? '' : 's'}, got ${args.length}`,
    );
  }
  for (const key of Object.keys(opts) as OptionName[]) {
    if (key !== 'help' && !spec.options.includes(key))
      return usageError(io, `--${key} does not apply to ${command}`);
  }
  if (opts.for !== undefined && opts.until !== undefined)
    return usageError(io, 'give --for or --until, not both');
  const json = opts.json ?? false;
  try {
    switch (command) {
      case 'validate':
        return await validate(io, {
          file: args[0],
          config: opts.config,
          stateDir: opts['state-dir'],
          json,
        });
      case 'log':
        return await logCommand(io, {
          server: opts.server,
          refused: opts.refused,
          since: opts.since,
          follow: opts.follow,
          json,
          stateDir: opts['state-dir'],
        });
      case 'list':
      case 'check':
      case 'explain':
        return await query(io, command, args, opts, json);
      default:
        return await daemonCommand(io, command, args, opts);
    }
  } catch (err) {
    return reportError(io, err);
  }
}

async function query(
  io: Io,
  command: 'list' | 'check' | 'explain',
  args: string[],
  opts: Options,
  json: boolean,
) {
  const backend: Backend = opts.config
    ? await offlineBackend(io, { config: opts.config, stateDir: opts['state-dir'] })
    : await onlineBackend(io, opts.socket);
  try {
    const server = args[0]!;
    if (command === 'list') return await list(io, backend, server, json);
    if (command === 'explain') return await explain(io, backend, server, json);
    return await check(io, backend, server, args[1]!, opts.write ? 'write' : 'read', json);
  } finally {
    await backend.close();
  }
}

/** One line on stderr for any failure; exit 3 when the daemon cannot be reached. */
export function reportError(io: Io, err: unknown): ExitCode {
  if (err instanceof RootsError) {
    io.err(
      `rootsctl: ${err.message}\n${err.hint && !err.message.includes(err.hint) ? `${err.hint}\n` : ''}`,
    );
    if (err.code === 'DAEMON_UNREACHABLE' || err.code === 'SOCKET_DIR_UNSAFE')
      return EXIT.unreachable;
    if (err.code === 'USAGE') return EXIT.usage;
    return EXIT.fail;
  }
  io.err(`rootsctl: ${err instanceof Error ? err.message : String(err)}\n`);
  return EXIT.fail;
}
