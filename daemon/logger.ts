/** The daemon's log: readable on a terminal, syslog priorities under systemd, or JSON lines. */
import { format, createLogger, transports, type Logger } from 'winston';

export type LogFormat = 'text' | 'journal' | 'json';
export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export const LOG_LEVELS: LogLevel[] = ['error', 'warn', 'info', 'debug'];

/** syslog priorities for the journal (`<3>` error ... `<7>` debug). */
const PRIORITY: Record<string, number> = { error: 3, warn: 4, info: 6, debug: 7 };

/** Text under a terminal, priority-prefixed text under systemd (`JOURNAL_STREAM`), unless asked. */
export function defaultLogFormat(env: Record<string, string | undefined>): LogFormat {
  return env.JOURNAL_STREAM ? 'journal' : 'text';
}

/** A winston logger writing one line per event to `stream` (stderr by default). */
export function makeLogger(
  options: { level?: LogLevel; format?: LogFormat; stream?: NodeJS.WritableStream } = {},
): Logger {
  const fmt = options.format ?? 'text';
  const line =
    fmt === 'json'
      ? format.combine(format.timestamp(), format.json())
      : fmt === 'journal'
        ? format.printf(
            ({ level, message, ...rest }) =>
              `<${PRIORITY[level] ?? 6}>${String(message)}${fields(rest)}`,
          )
        : format.combine(
            format.timestamp(),
            format.printf(
              ({ level, message, timestamp, ...rest }) =>
                `${String(timestamp)} ${level.padEnd(5)} ${String(message)}${fields(rest)}`,
            ),
          );
  return createLogger({
    levels: { error: 0, warn: 1, info: 2, debug: 3 },
    level: options.level ?? 'info',
    format: line,
    transports: [new transports.Stream({ stream: options.stream ?? process.stderr })],
  });
}

/** Extra structured fields as ` key=value`, for the text formats. */
function fields(rest: Record<string, unknown>): string {
  const out: string[] = [];
  for (const [k, v] of Object.entries(rest)) {
    if (typeof k === 'symbol' || v === undefined) continue;
    out.push(`${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  }
  return out.length > 0 ? ` ${out.join(' ')}` : '';
}
