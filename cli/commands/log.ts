/** `rootsctl log`: what the daemon allowed and refused, as a table or JSON lines. */
import { isRefusal, rootCounts, type Decision } from '../../common/decision.js';
import { RootsError } from '../../common/errors.js';
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { decisionLogFile, stateDir, tildify, homeDir } from '../../common/locations.js';
import { connect, withClient } from '../connect.js';
import { parseDuration } from '../duration.js';
import { followDecisions, readDecisions } from '../decision-reader.js';
import { columns, EXIT, type ExitCode, type Io } from '../io.js';
import { MAX_LOG_READ_BYTES, shownPath } from '../log-file.js';
import type { Options } from '../options.js';
import { inLine, terminalJson, visibleText } from '../terminal-text.js';
import { localTime } from '../format.js';
import type { DaemonStatus } from '../../protocol/methods.js';
import type { RootsClient } from '../../protocol/client.js';

/** `rootsctl log [--server S] [--refused] [--since D] [--follow] [--json]`. */
export async function log(io: Io, _args: string[], opts: Options): Promise<ExitCode> {
  const { file, status } = await logFile(io, opts);
  const note = await stateDirNote(io, opts, file, status);
  if (note !== '') io.err(note);
  const since = opts.since === undefined ? undefined : sinceTime(opts.since, Date.now());
  const keep = (d: Decision): boolean =>
    (opts.server === undefined || ('server' in d && d.server === opts.server)) &&
    (!opts.refused || isRefusal(d)) &&
    (since === undefined || Date.parse(d.time) >= since);
  const home = homeDir(io.env);
  /** The table's column widths, kept while following so that each new row lines up. */
  const widths: number[] = [];
  const show = (list: Decision[], header: boolean): void => {
    if (list.length === 0) return;
    // Entries come from a file (and with --socket, from where a daemon said): what a terminal
    // would act on is escaped in both forms (terminal-text.ts).
    if (opts.json) io.out(list.map((d) => `${terminalJson(d)}\n`).join(''));
    else io.out(decisionTable(list, home, header, widths));
  };
  const where = shownPath(file);
  const { entries, bad, position, skipped } = await readDecisions(file);
  const shown = entries.filter(keep);
  if (skipped > 0) io.err(skippedLine(where, skipped));
  show(shown, true);
  if (bad > 0)
    io.err(
      `rootsctl: skipped ${bad} line${bad === 1 ? '' : 's'} of ${where} that are not entries\n`,
    );
  if (!opts.follow) {
    if (shown.length === 0 && !opts.json) {
      io.err(
        entries.length === 0
          ? note !== ''
            ? `No decisions recorded in ${where}.\n`
            : `No decisions recorded in ${where} yet (mcp-rootsd writes them as it answers).\n`
          : 'No decisions match.\n',
      );
    }
    return EXIT.ok;
  }
  const stop = io.interrupted?.() ?? new Promise<void>(() => undefined);
  let first = shown.length === 0;
  await followDecisions(
    file,
    position,
    (d) => {
      if (!keep(d)) return;
      show([d], first);
      first = false;
    },
    stop,
    (bytes) => io.err(skippedLine(where, bytes)),
  );
  return EXIT.ok;
}

/**
 * The decision log to read: the state directory's (`--state-dir`, or the default one), or with
 * `--socket` alone the one that daemon writes. Like every other command, `--socket` names the
 * daemon meant, and a daemon started with its own `--state-dir` (the demo's, a test's) keeps its
 * log there, not in the default directory this would otherwise read.
 */
async function logFile(io: Io, opts: Options): Promise<{ file: string; status?: DaemonStatus }> {
  if (opts.socket === undefined || opts['state-dir'] !== undefined)
    return { file: decisionLogFile(stateDir(io.env, io.cwd, opts['state-dir'])) };
  const status = await withClient(io, opts.socket, (client) => client.status());
  const { decisionLog } = status;
  if (decisionLog === undefined) {
    throw new RootsError(
      'PATH_NOT_FOUND',
      `the daemon on ${opts.socket} names no decision log: it keeps none (started with --decision-log-bytes 0) or is older than this rootsctl; give --state-dir DIR to read the log in DIR`,
    );
  }
  return { file: checkedLogPath(decisionLog, opts.socket), status };
}

/** How long `log` waits for a daemon it does not need, only to ask after its state directory. */
const QUIET_ASK_MS = 2000;

/**
 * The daemon's word on its state directory, when `file` is its log and it no longer uses that
 * directory (removed or replaced while it ran): the log read here then holds none of its
 * decisions since, and an empty one would read as "nothing decided". Asked only of a daemon that
 * answers at once; `log` reads a file and needs none.
 */
async function stateDirNote(
  io: Io,
  opts: Options,
  file: string,
  known: DaemonStatus | undefined,
): Promise<string> {
  const status = known ?? (await quietStatus(io, opts.socket));
  const problem = status?.stateDirProblem;
  if (typeof problem !== 'string' || status?.decisionLog === undefined) return '';
  const here = await realpath(dirname(file)).then(
    (dir) => join(dir, basename(file)),
    () => file,
  );
  if (status.decisionLog !== file && status.decisionLog !== here) return '';
  return `rootsctl: NOTE: ${inLine(problem)} Until then mcp-rootsd records no decisions, so this log ends where the directory changed.\n`;
}

async function quietStatus(io: Io, socket: string | undefined): Promise<DaemonStatus | undefined> {
  // The limit is for the whole question, not each step (finding the socket, connecting,
  // `initialize`, `daemon/status`): a daemon slow at each would hold `log` four times as long.
  let late = false;
  let client: RootsClient | undefined;
  const asked = (async () => {
    client = await connect(io, socket, QUIET_ASK_MS);
    if (late) return undefined;
    return await client.status();
  })().catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const given = new Promise<undefined>(
    (resolve) => (timer = setTimeout(() => resolve(undefined), QUIET_ASK_MS)),
  );
  const status = await Promise.race([asked, given]);
  late = true;
  clearTimeout(timer);
  // Closed now (a question still waiting ends with it), or once it is made, if that is later.
  const close = () => void client?.close().catch(() => undefined);
  if (client !== undefined) close();
  else void asked.finally(close);
  return status;
}

/** The name of every daemon's log, in whatever state directory. */
const LOG_NAME = basename(decisionLogFile('/'));

/** The longest path Linux opens (PATH_MAX, with its NUL). */
const PATH_MAX_BYTES = 4095;

/**
 * The daemon's word on where its log is, taken only when it is a path the daemon could have
 * written: a string, absolute (a relative one would be read from rootsctl's own directory),
 * without control characters (no state directory of the daemon's has them; a NUL would end the
 * path early), no longer than PATH_MAX, and named as the daemon names its log (so not /dev/zero,
 * /etc/shadow or /proc/self/environ, whatever they are). Anything else says the answer is not
 * a daemon's.
 */
function checkedLogPath(value: unknown, socket: string): string {
  const bad =
    typeof value !== 'string'
      ? `${Array.isArray(value) ? 'a list' : value === null ? 'null' : `a value of type ${typeof value}`}, not a path`
      : !isAbsolute(value)
        ? 'not an absolute path'
        : Buffer.byteLength(value) > PATH_MAX_BYTES
          ? `a path of ${Buffer.byteLength(value)} bytes, longer than any the system opens`
          : // eslint-disable-next-line no-control-regex
            /[\u0000-\u001f\u007f-\u009f]/.test(value)
            ? 'a path with control characters in it'
            : basename(value) !== LOG_NAME
              ? `not a file named ${LOG_NAME}, the only name mcp-rootsd gives its log`
              : undefined;
  if (bad === undefined) return value as string;
  const named = typeof value === 'string' ? ` "${shownPath(value)}"` : '';
  throw new RootsError(
    'PROTOCOL',
    `the daemon on ${shownPath(socket)} names its decision log as${named}: ${bad}. Not read: that answer is not one mcp-rootsd gives; check what is listening there, or give --state-dir DIR to read the log in DIR`,
  );
}

/** The note for a log bigger than `log` reads (log-file.ts). */
function skippedLine(where: string, bytes: number): string {
  return `rootsctl: ${where}: left out the oldest ${bytes} bytes of the decision log; rootsctl log reads the newest ${MAX_LOG_READ_BYTES / (1024 * 1024)} MiB (older entries are in the file and its rotated copies)\n`;
}

/** `--since 1h` (a duration back from now) or an RFC 3339 instant, as epoch ms. */
function sinceTime(text: string, now: number): number {
  if (/^\d{4}-\d{2}-\d{2}/.test(text)) {
    const ms = Date.parse(text);
    if (Number.isNaN(ms) || !/([Zz]|[+-]\d{2}:\d{2})$/.test(text)) {
      throw new RootsError(
        'USAGE',
        `--since "${text}" is not a duration (30m, 2h, 1d) or an RFC 3339 date-time with a zone`,
      );
    }
    return ms;
  }
  try {
    return now - parseDuration(text) * 1000;
  } catch {
    throw new RootsError(
      'USAGE',
      `--since "${text}" is not a duration (30m, 2h, 1d) or an RFC 3339 date-time with a zone`,
    );
  }
}

function decisionTable(list: Decision[], home: string, header: boolean, widths: number[]): string {
  const rows = list.map((d) => [
    localTime(d.time),
    'server' in d ? visibleText(d.server) : '-',
    ...what(d, home),
  ]);
  return columns(header ? [['TIME', 'SERVER', 'DECISION', 'DETAIL'], ...rows] : rows, widths);
}

/**
 * The DECISION and DETAIL cells. Every text from the entry is shown escaped (terminal-text.ts), so
 * a crafted name cannot forge a row or reach the terminal as a control sequence.
 */
function what(d: Decision, home: string): [string, string] {
  const path = (p: string): string => visibleText(tildify(p, home));
  const text = visibleText;
  const by = (tool?: string, client?: string): string =>
    tool || client
      ? ` [${[tool, client]
          .filter((l): l is string => Boolean(l))
          .map(text)
          .join(' via ')}]`
      : '';
  switch (d.kind) {
    case 'check':
      return [
        `${d.allowed ? 'allowed' : 'REFUSED'} ${d.access}`,
        `${path(d.path)}${by(d.tool, d.client)}${d.allowed ? '' : `: ${text(d.reason)}`}`,
      ];
    case 'roots':
      return [
        `roots ${rootCounts(d.added, d.removed, d.changed ?? [])}`,
        [
          ...d.added.map((u) => `+${text(u)}`),
          ...d.removed.map((u) => `-${text(u)}`),
          ...(d.changed ?? []).map((u) => `~${text(u)}`),
        ].join(' '),
      ];
    case 'grant-added':
      return [
        `grant ${d.readOnly ? 'read-only' : 'read-write'}`,
        `${path(d.path)}${d.expiresAt ? ` until ${localTime(d.expiresAt)}` : ''}`,
      ];
    case 'grant-revoked':
      return ['grant revoked', path(d.path)];
    case 'grant-expired':
      return ['grant expired', path(d.path)];
    case 'grant-refused':
      return ['grant REFUSED', `${path(d.path)}: ${text(d.reason)}`];
    case 'ask':
      return [
        `asked: ${d.answer}`,
        `${d.access} ${path(d.path)}${by(d.tool, d.client)}${d.granted ? ` → ${d.granted.readOnly ? 'read-only' : 'read-write'} ${path(d.granted.path)} until ${localTime(d.granted.expiresAt)}` : ''}`,
      ];
    case 'policy-loaded':
      // The files are those of the policy now in force, not those that changed.
      return ['policy loaded', `${text(d.reason)}; in force: ${d.files.map(path).join(', ')}`];
    case 'policy-rejected':
      return ['policy REJECTED', `${text(d.reason)}: ${(d.errors ?? []).map(text).join('; ')}`];
    case 'lockdown':
      return [d.on ? 'lockdown on' : 'lockdown off', ''];
  }
}
