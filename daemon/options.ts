/** mcp-rootsd's command line. */
import { parseArgs } from 'node:util';
import { RootsError } from '../common/errors.js';
import { configFile, homeDir, stateDir, type Env } from '../common/locations.js';
import { resolveSocketPath } from '../protocol/socket-path.js';
import { DEFAULT_DECISION_LOG_BYTES } from './decision-log.js';
import { defaultLogFormat, LOG_LEVELS, type LogFormat, type LogLevel } from './logger.js';

export interface DaemonOptions {
  configFile: string;
  socket: string;
  stateDir: string;
  home: string;
  logLevel: LogLevel;
  logFormat: LogFormat;
  /** Settle window for coalescing events and pushes (ms). */
  settleMs: number;
  /** Full reconciliation interval (ms). */
  rescanMs: number;
  /** Rescan interval for paths that could not be watched by events (ms). */
  degradedRescanMs: number;
  /** Size of one decision log file before it rotates (bytes); 0 keeps no decision log. */
  decisionLogBytes: number;
}

export const DAEMON_USAGE = `Usage: mcp-rootsd [options]

Serve each MCP server's roots from the mcp-roots policy over a Unix socket. Runs in the foreground.

Options:
  --config FILE          main policy file (default: $MCP_ROOTS_CONFIG, else
                         $XDG_CONFIG_HOME/mcp-roots.yaml, ~/.config/mcp-roots.yaml)
  --socket PATH          socket path (default: $MCP_ROOTS_SOCKET, else
                         $XDG_RUNTIME_DIR/mcp-roots/rootsd.sock, else /run/user/<uid>/mcp-roots/,
                         else /tmp/mcp-roots-<uid>/)
  --state-dir DIR        where grants.yaml and lockdown live (default: ~/.local/state/mcp-roots)
  --log-level LEVEL      error, warn, info (default) or debug
  --log-format FORMAT    text (default on a terminal), journal (default under systemd) or json
  --settle-ms N          coalescing window for changes (default 50)
  --rescan-seconds N     full reconciliation interval (default 300)
  --decision-log-kib N   size of decisions.jsonl in the state directory before it rotates, keeping
                         3 older files (default 10240); 0 records no decisions
  -h, --help             this text
  -V, -v, --version      the version
`;

/** Parse argv; throws RootsError('USAGE') with a message naming the bad option. */
export function parseDaemonArgs(
  argv: string[],
  env: Env,
  cwd: string,
  uid: number,
): DaemonOptions | 'help' | 'version' {
  let values;
  try {
    ({ values } = parseArgs({
      // `-V` as rootsctl and mcp-roots-proxy spell it; `-v` as this daemon always did.
      args: argv.map((a) => (a === '-V' ? '--version' : a)),
      options: {
        config: { type: 'string' },
        socket: { type: 'string' },
        'state-dir': { type: 'string' },
        'log-level': { type: 'string' },
        'log-format': { type: 'string' },
        'settle-ms': { type: 'string' },
        'rescan-seconds': { type: 'string' },
        'decision-log-kib': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean', short: 'v' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (err) {
    throw new RootsError('USAGE', (err as Error).message);
  }
  if (values.help) return 'help';
  if (values.version) return 'version';
  const level = values['log-level'] ?? 'info';
  if (!LOG_LEVELS.includes(level as LogLevel)) {
    throw new RootsError(
      'USAGE',
      `--log-level must be one of ${LOG_LEVELS.join(', ')}, not "${level}"`,
    );
  }
  const fmt = values['log-format'] ?? defaultLogFormat(env);
  if (!['text', 'journal', 'json'].includes(fmt)) {
    throw new RootsError('USAGE', `--log-format must be text, journal or json, not "${fmt}"`);
  }
  return {
    configFile: configFile(env, cwd, values.config),
    socket: resolveSocketPath({ socket: values.socket, env, uid, cwd }),
    stateDir: stateDir(env, cwd, values['state-dir']),
    home: homeDir(env),
    logLevel: level as LogLevel,
    logFormat: fmt as LogFormat,
    settleMs: number(values['settle-ms'], '--settle-ms', 50, 0),
    rescanMs: number(values['rescan-seconds'], '--rescan-seconds', 300, 1) * 1000,
    degradedRescanMs: 2000,
    decisionLogBytes:
      number(
        values['decision-log-kib'],
        '--decision-log-kib',
        DEFAULT_DECISION_LOG_BYTES / 1024,
        0,
      ) * 1024,
  };
}

function number(raw: string | undefined, flag: string, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min)
    throw new RootsError('USAGE', `${flag} must be a number ≥ ${min}, not "${raw}"`);
  return n;
}
