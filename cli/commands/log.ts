/** `rootsctl log`: what the daemon allowed and refused, as a table or JSON lines. */
import { isRefusal, rootCounts, type Decision } from '../../common/decision.js';
import { RootsError } from '../../common/errors.js';
import { decisionLogFile, stateDir, tildify, homeDir } from '../../common/locations.js';
import { withClient } from '../connect.js';
import { parseDuration } from '../duration.js';
import { followDecisions, readDecisions } from '../decision-reader.js';
import { columns, EXIT, type ExitCode, type Io } from '../io.js';
import type { Options } from '../options.js';

/** `rootsctl log [--server S] [--refused] [--since D] [--follow] [--json]`. */
export async function log(io: Io, _args: string[], opts: Options): Promise<ExitCode> {
  const file = await logFile(io, opts);
  const since = opts.since === undefined ? undefined : sinceTime(opts.since, Date.now());
  const keep = (d: Decision): boolean =>
    (opts.server === undefined || ('server' in d && d.server === opts.server)) &&
    (!opts.refused || isRefusal(d)) &&
    (since === undefined || Date.parse(d.time) >= since);
  const home = homeDir(io.env);
  const show = (list: Decision[], header: boolean): void => {
    if (list.length === 0) return;
    if (opts.json) io.out(list.map((d) => `${JSON.stringify(d)}\n`).join(''));
    else io.out(decisionTable(list, home, header));
  };
  const { entries, bad, position } = await readDecisions(file);
  const shown = entries.filter(keep);
  show(shown, true);
  if (bad > 0)
    io.err(
      `rootsctl: skipped ${bad} line${bad === 1 ? '' : 's'} of ${file} that are not entries\n`,
    );
  if (!opts.follow) {
    if (shown.length === 0 && !opts.json) {
      io.err(
        entries.length === 0
          ? `No decisions recorded in ${file} yet (mcp-rootsd writes them as it answers).\n`
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
  );
  return EXIT.ok;
}

/**
 * The decision log to read: the state directory's (`--state-dir`, or the default one), or with
 * `--socket` alone the one that daemon writes. Like every other command, `--socket` names the
 * daemon meant, and a daemon started with its own `--state-dir` (the demo's, a test's) keeps its
 * log there, not in the default directory this would otherwise read.
 */
async function logFile(io: Io, opts: Options): Promise<string> {
  if (opts.socket === undefined || opts['state-dir'] !== undefined)
    return decisionLogFile(stateDir(io.env, io.cwd, opts['state-dir']));
  const { decisionLog } = await withClient(io, opts.socket, (client) => client.status());
  if (decisionLog === undefined) {
    throw new RootsError(
      'PATH_NOT_FOUND',
      `the daemon on ${opts.socket} names no decision log: it keeps none (started with --decision-log-bytes 0) or is older than this rootsctl; give --state-dir DIR to read the log in DIR`,
    );
  }
  return decisionLog;
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

function decisionTable(list: Decision[], home: string, header: boolean): string {
  const rows = list.map((d) => [
    shortTime(d.time),
    'server' in d ? d.server : '-',
    ...what(d, home),
  ]);
  return columns(header ? [['TIME', 'SERVER', 'DECISION', 'DETAIL'], ...rows] : rows);
}

/** Local time, to the second: what a person compares with their own clock. */
function shortTime(iso: string): string {
  const d = new Date(iso);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** The DECISION and DETAIL cells. Paths are shown escaped, so a crafted name cannot forge a row. */
function what(d: Decision, home: string): [string, string] {
  const path = (p: string): string => JSON.stringify(tildify(p, home)).slice(1, -1);
  const by = (tool?: string, client?: string): string =>
    tool || client ? ` [${[tool, client].filter(Boolean).join(' via ')}]` : '';
  switch (d.kind) {
    case 'check':
      return [
        `${d.allowed ? 'allowed' : 'REFUSED'} ${d.access}`,
        `${path(d.path)}${by(d.tool, d.client)}${d.allowed ? '' : `: ${d.reason}`}`,
      ];
    case 'roots':
      return [
        `roots ${rootCounts(d.added, d.removed, d.changed ?? [])}`,
        [
          ...d.added.map((u) => `+${u}`),
          ...d.removed.map((u) => `-${u}`),
          ...(d.changed ?? []).map((u) => `~${u}`),
        ].join(' '),
      ];
    case 'grant-added':
      return [
        `grant ${d.readOnly ? 'read-only' : 'read-write'}`,
        `${path(d.path)}${d.expiresAt ? ` until ${d.expiresAt}` : ''}`,
      ];
    case 'grant-revoked':
      return ['grant revoked', path(d.path)];
    case 'grant-expired':
      return ['grant expired', path(d.path)];
    case 'ask':
      return [
        `asked: ${d.answer}`,
        `${d.access} ${path(d.path)}${by(d.tool, d.client)}${d.granted ? ` → ${d.granted.readOnly ? 'read-only' : 'read-write'} ${path(d.granted.path)} until ${d.granted.expiresAt}` : ''}`,
      ];
    case 'policy-loaded':
      return ['policy loaded', `${d.reason}: ${d.files.map(path).join(', ')}`];
    case 'policy-rejected':
      return ['policy REJECTED', `${d.reason}: ${(d.errors ?? []).join('; ')}`];
    case 'lockdown':
      return [d.on ? 'lockdown on' : 'lockdown off', ''];
  }
}
