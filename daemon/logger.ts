/**
 * The daemon's log: readable on a terminal, syslog priorities under systemd, or JSON lines.
 *
 * A few lines of our own rather than a logging library: the daemon writes one line per event
 * to one stream, and a library for that cost about 9 MB of the idle daemon's memory.
 */
import { actedOnEscaped, jsonActedOnEscaped } from '../common/acted-on.js';

export type LogFormat = 'text' | 'journal' | 'json';
export type LogLevel = 'error' | 'warn' | 'info' | 'debug';
export const LOG_LEVELS: LogLevel[] = ['error', 'warn', 'info', 'debug'];

/** Structured extras, shown as ` key=value` in text and as fields in JSON. */
export type LogFields = Record<string, unknown>;

export interface Logger {
  error(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  debug(message: string, fields?: LogFields): void;
  /** Resolves once every line written so far has been handed to the stream. */
  flush(): Promise<void>;
}

/** syslog priorities for the journal (`<3>` error ... `<7>` debug). */
const PRIORITY: Record<LogLevel, number> = { error: 3, warn: 4, info: 6, debug: 7 };

/** Text under a terminal, priority-prefixed text under systemd (`JOURNAL_STREAM`), unless asked. */
export function defaultLogFormat(env: Record<string, string | undefined>): LogFormat {
  return env.JOURNAL_STREAM ? 'journal' : 'text';
}

/** A logger writing one line per event at `level` or more severe to `stream` (stderr by default). */
export function makeLogger(
  options: { level?: LogLevel; format?: LogFormat; stream?: NodeJS.WritableStream } = {},
): Logger {
  const stream = options.stream ?? process.stderr;
  const limit = LOG_LEVELS.indexOf(options.level ?? 'info');
  const render = RENDER[options.format ?? 'text'];
  const at =
    (level: LogLevel) =>
    (message: string, extra: LogFields = {}): void => {
      if (LOG_LEVELS.indexOf(level) > limit) return;
      stream.write(`${render(level, message, extra)}\n`);
    };
  return {
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    flush: () => new Promise<void>((resolve) => stream.write('', () => resolve())),
  };
}

const RENDER: Record<LogFormat, (level: LogLevel, message: string, extra: LogFields) => string> = {
  text: (level, message, extra) =>
    `${new Date().toISOString()} ${level.padEnd(5)} ${oneLine(message)}${fields(extra)}`,
  journal: (level, message, extra) => `<${PRIORITY[level]}>${oneLine(message)}${fields(extra)}`,
  json: (level, message, extra) =>
    jsonActedOnEscaped(
      JSON.stringify({ ...extra, level, message, timestamp: new Date().toISOString() }),
    ),
};

/**
 * What a terminal acts on escaped as in JSON (common/acted-on.ts), so a path with a newline in it
 * (a name an agent chose) cannot forge a line of its own in the log, nor a C1 control, bidi
 * control or line separator in it drive or reorder the terminal of a daemon run in the foreground
 * or of `journalctl`. The json format escapes the same: JSON.stringify leaves those raw.
 */
function oneLine(text: string): string {
  return actedOnEscaped(text);
}

/** Extra structured fields as ` key=value`, for the text formats. */
function fields(extra: LogFields): string {
  const out: string[] = [];
  for (const [k, v] of Object.entries(extra)) {
    if (v === undefined) continue;
    out.push(`${k}=${typeof v === 'string' ? oneLine(v) : jsonActedOnEscaped(JSON.stringify(v))}`);
  }
  return out.length > 0 ? ` ${out.join(' ')}` : '';
}
