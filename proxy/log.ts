/** The proxy's own log: one line per event on stderr, never on stdout (stdout carries only MCP frames). */

import { actedOnEscaped } from '../common/acted-on.js';

/** Log levels, most severe first. */
export const LOG_LEVELS = ['error', 'warn', 'info', 'debug'] as const;

/** One of `LOG_LEVELS`. */
export type LogLevel = (typeof LOG_LEVELS)[number];

/** A leveled logger. */
export type ProxyLogger = Record<LogLevel, (message: string) => void>;

/** Whether `s` names a log level. */
export function isLogLevel(s: string): s is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(s);
}

/** A logger writing `mcp-roots-proxy[NAME] level: message` lines to `stream` (default stderr). */
export function makeProxyLogger(
  server: string,
  level: LogLevel,
  stream: { write(s: string): unknown } = process.stderr,
): ProxyLogger {
  const max = LOG_LEVELS.indexOf(level);
  const line =
    (l: LogLevel) =>
    (message: string): void => {
      if (LOG_LEVELS.indexOf(l) <= max)
        // Paths and URIs in a message are the server's or an agent's: escaped, one line each.
        stream.write(`${actedOnEscaped(`mcp-roots-proxy[${server}] ${l}: ${message}`)}\n`);
    };
  return { error: line('error'), warn: line('warn'), info: line('info'), debug: line('debug') };
}
