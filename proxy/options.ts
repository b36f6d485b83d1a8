/** The proxy's command line, checked once into a complete options object. */
import { closest } from '../common/levenshtein.js';
import { RootsError } from '../common/errors.js';
import { shellQuote } from '../common/shell-quote.js';
import { isValidServerName } from '../protocol/validate-params.js';
import { isLogLevel, LOG_LEVELS, type LogLevel } from './log.js';

/** Everything the proxy was asked to do. */
export interface ProxyOptions {
  server: string;
  socket: string | undefined;
  enforce: boolean;
  logLevel: LogLevel;
  /** Run the server under bubblewrap (`--sandbox`). */
  sandbox: boolean;
  /** `--env NAME=VALUE`, in order; values may hold `{roots}` and `{root}`. */
  env: [name: string, value: string][];
  /** `--cwd DIR`: the server's working directory; may be `{root}`. */
  cwd: string | undefined;
  /** The server's command after `--`; undefined: the policy's `servers.<name>.launch`. */
  command: string | undefined;
  /** How long an ask waits for the person's answer (`--ask-timeout SECONDS`, default 60). */
  askWaitMs: number | undefined;
  /** `--allow-unknown-server`: start even though no entry of the policy names the server. */
  allowUnknownServer: boolean;
  args: string[];
}

/** The usage line, for errors and `--help`. */
export const USAGE =
  'usage: mcp-roots-proxy --server NAME [--socket PATH] [--no-enforce] [--log-level LEVEL] [--ask-timeout SECONDS] [--allow-unknown-server] [--sandbox] [--env NAME=VALUE]... [--cwd DIR] [-- COMMAND [ARGS...]]\n' +
  "  ARGS, VALUE and DIR may hold {roots}, {roots:rw}, {roots:ro} (whole arguments) and {root}; without a COMMAND the policy's servers.NAME.launch starts the server";

function usage(message: string): RootsError {
  return new RootsError('USAGE', `${message}\n${USAGE}`);
}

/**
 * The Inspector CLI recipe. The Inspector takes the first `--` for itself, and since 0.15 one more
 * (its launcher and its CLI each take one): two before the server's command leave the proxy one,
 * and the proxy skips a second of its own, so the line works whichever the Inspector takes.
 */
export const INSPECTOR_RECIPE =
  'npx @modelcontextprotocol/inspector --cli --method tools/list -- mcp-roots-proxy --server fs -- -- node server.js';

/**
 * No `--` anywhere, yet something that is not the proxy's: the server's command, most likely,
 * whose `--` a tool in between (the MCP Inspector CLI takes the first one) kept for itself.
 */
function swallowed(rest: readonly string[], server: string | undefined): RootsError {
  const command = rest.map(shellQuote).join(' ');
  return usage(
    `${shellQuote(rest[0]!)} is not an option of mcp-roots-proxy, and no -- came before it. ` +
      `The server's command goes after --:\n` +
      `  mcp-roots-proxy --server ${shellQuote(server ?? 'NAME')} -- ${command}\n` +
      `If a tool starts the proxy for you, it probably took the -- for itself (the MCP Inspector ` +
      `CLI takes the first one, and since 0.15 another): give that tool a -- of its own before ` +
      `mcp-roots-proxy and write -- -- before the server's command (the proxy skips a second --), as in\n` +
      `  ${INSPECTOR_RECIPE}`,
  );
}

/** The options the proxy takes (the cases of the switch below), for "did you mean". */
const PROXY_FLAGS = [
  '--server',
  '--socket',
  '--no-enforce',
  '--sandbox',
  '--allow-unknown-server',
  '--env',
  '--cwd',
  '--log-level',
  '--ask-timeout',
  '--help',
];

/** ` (did you mean --server?)` for a long option a typo away from one the proxy takes. */
function optionHint(flag: string): string {
  const near = flag.startsWith('--') ? closest(flag, PROXY_FLAGS) : undefined;
  return near === undefined ? '' : ` (did you mean ${near}?)`;
}

/** Parse the arguments after the program name; `undefined` means `--help`. Throws `USAGE` errors. */
export function parseProxyArgs(argv: readonly string[]): ProxyOptions | undefined {
  let server: string | undefined;
  let socket: string | undefined;
  let enforce = true;
  let logLevel: LogLevel = 'info';
  let sandbox = false;
  const env: [string, string][] = [];
  let cwd: string | undefined;
  let askWaitMs: number | undefined;
  let allowUnknownServer = false;
  let i = 0;
  const value = (flag: string, inline: string | undefined): string => {
    if (inline !== undefined) return inline;
    const v = argv[++i];
    if (v === undefined || v === '--') throw usage(`${flag} needs a value`);
    return v;
  };
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') break;
    const eq = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    const inline = eq === -1 ? undefined : arg.slice(eq + 1);
    switch (flag) {
      case '--server':
        server = value(flag, inline);
        break;
      case '--socket':
        socket = value(flag, inline);
        break;
      case '--no-enforce':
        enforce = false;
        break;
      case '--sandbox':
        sandbox = true;
        break;
      case '--allow-unknown-server':
        allowUnknownServer = true;
        break;
      case '--env': {
        const v = value(flag, inline);
        const at = v.indexOf('=');
        if (at <= 0) throw usage(`--env ${v}: write --env NAME=VALUE`);
        env.push([v.slice(0, at), v.slice(at + 1)]);
        break;
      }
      case '--cwd':
        cwd = value(flag, inline);
        break;
      case '--log-level': {
        const level = value(flag, inline);
        if (!isLogLevel(level)) throw usage(`--log-level must be one of ${LOG_LEVELS.join(', ')}`);
        logLevel = level;
        break;
      }
      case '--ask-timeout': {
        const seconds = Number(value(flag, inline));
        if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600)
          throw usage('--ask-timeout must be a number of seconds above 0 and at most 3600');
        askWaitMs = Math.round(seconds * 1000);
        break;
      }
      case '--help':
      case '-h':
        return undefined;
      default:
        // A typo of one of the proxy's options is likelier than a -- another tool took.
        if (!argv.includes('--') && optionHint(flag) === '') throw swallowed(argv.slice(i), server);
        throw usage(
          `unknown option ${arg}${optionHint(flag)} (the server's command goes after --)`,
        );
    }
  }
  if (server === undefined) throw usage('--server NAME is required');
  if (!isValidServerName(server)) {
    throw usage('--server must be 1 to 256 characters without control characters');
  }
  // A second `--` is what a tool in between did not take (the Inspector takes one or two): no
  // program is named `--`, so skip it.
  let start = i + 1;
  if (argv[start] === '--') start++;
  const [command, ...args] = argv.slice(start);
  if (i < argv.length && command === undefined) {
    throw usage(
      "the server's command is missing after -- (leave out -- to use the policy's launch)",
    );
  }
  return {
    server,
    socket,
    enforce,
    logLevel,
    askWaitMs,
    allowUnknownServer,
    sandbox,
    env,
    cwd,
    command,
    args,
  };
}
