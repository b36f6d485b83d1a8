/**
 * `rootsctl doctor`: what this machine has and lacks for mcp-roots, one line each, OK or the fix
 * to run. Exit 1 when something needed fails (warnings do not count).
 */
import { isDefaultPolicy, onPolicy } from '../on-policy.js';
import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { RootsError } from '../../common/errors.js';
import { homeDir, tildify } from '../../common/locations.js';
import type { PolicyError } from '../../common/types.js';
import type { DaemonStatus } from '../../protocol/methods.js';
import { connect } from '../connect.js';
import { fail, ok, type Check } from '../doctor/check.js';
import { inotifyChecks, inotifyInUse } from '../doctor/inotify.js';
import { sandboxCheck } from '../doctor/sandbox.js';
import {
  daemonCheck,
  nodeCheck,
  socketDirCheck,
  systemdCheck,
  type FixCommands,
} from '../doctor/system.js';
import { shellQuote } from '../../common/shell-quote.js';
import { commandLine, ctl } from '../hint.js';
import { countWatches } from '../doctor/watch-count.js';
import { EXIT, type ExitCode, type Io } from '../io.js';
import { evaluateOffline } from '../offline.js';
import { sortProblems } from '../format.js';
import type { Options } from '../options.js';
import { paint, useColour } from '../style.js';
import { inLine } from '../terminal-text.js';

/** Where the doctor reads the kernel (a test points these at a copy to show limits it cannot set). */
export interface DoctorPlaces {
  proc: string;
  procSys: string;
  nodeVersion: string;
}

const REAL: DoctorPlaces = {
  proc: '/proc',
  procSys: '/proc/sys',
  nodeVersion: process.versions.node,
};

async function askDaemon(io: Io, socket: string | undefined): Promise<DaemonStatus | RootsError> {
  try {
    const client = await connect(io, socket);
    try {
      return await client.status();
    } finally {
      await client.close();
    }
  } catch (err) {
    return err instanceof RootsError ? err : new RootsError('INTERNAL', String(err));
  }
}

/** Whether a policy file asks for a sandboxed server (`servers.<name>.sandbox`). */
async function wantsSandbox(files: string[]): Promise<boolean> {
  for (const file of files) {
    try {
      const doc = parse(await readFile(file, 'utf8')) as {
        servers?: Record<string, { sandbox?: unknown }>;
      };
      for (const s of Object.values(doc?.servers ?? {})) if (s?.sandbox) return true;
    } catch {
      // the policy check reports a file that does not parse
    }
  }
  return false;
}

/** The first of a policy's errors, where it is and what it says (validate lists them all). */
function firstError(errors: PolicyError[], home: string): string {
  const e = sortProblems(errors)[0]!;
  return inLine(`${tildify(e.file, home)}:${e.line}:${e.column}: ${e.message}`);
}

/**
 * The policy file's line, and what it needs: directories to watch, and a sandbox. `served` is
 * the main file of the daemon that answered, checked when no `--config` names another: a daemon
 * started on the demo's policy, or any file of its own, has no use for the default file.
 */
async function policyCheck(io: Io, opts: Options, served: string | undefined, limit: number) {
  const home = homeDir(io.env);
  const config = opts.config ?? served;
  const { evaluation, file } = await evaluateOffline(io, { config, withGrants: false });
  const shown =
    opts.config === undefined && served !== undefined && !isDefaultPolicy(io, served)
      ? `${tildify(file, home)} (the policy mcp-rootsd serves)`
      : tildify(file, home);
  const files = evaluation.sources.files.map((f) => f.file);
  // Read the main file even when it does not validate: a sandbox it asks for is still wanted.
  const sandbox = await wantsSandbox([...new Set([file, ...files])]);
  if (evaluation.sources.missingMain) {
    return {
      check: fail('policy', `${shown} does not exist: every server has no roots`, [
        ctl(io, onPolicy(io, 'init', file)),
      ]),
      watches: undefined,
      sandbox,
    };
  }
  const n = evaluation.errors.length;
  if (n > 0) {
    return {
      check: fail(
        'policy',
        `${shown} has ${n} error${n === 1 ? '' : 's'}; the first: ${firstError(evaluation.errors, home)}`,
        [ctl(io, `validate ${shellQuote(file)}`), ctl(io, onPolicy(io, 'edit', file))],
      ),
      watches: undefined,
      sandbox,
    };
  }
  const watches = await countWatches(evaluation.resolved.watchPlan, limit);
  return {
    check: ok(
      'policy',
      `${shown}: valid, ${files.length} file${files.length === 1 ? '' : 's'}, ${named(evaluation.resolved.serverNames().length)}`,
    ),
    watches,
    sandbox,
  };
}

export async function runDoctor(io: Io, opts: Options, places: DoctorPlaces): Promise<Check[]> {
  const home = homeDir(io.env);
  const uid = process.getuid!();
  const checks: Check[] = [nodeCheck(places.nodeVersion)];
  const socket = await socketDirCheck(io.env, uid, opts.socket, io.cwd, home);
  checks.push(socket.check);
  const status = await askDaemon(io, opts.socket);
  const cmd: FixCommands = {
    ctl: (args, daemon = false) => ctl(io, args, daemon ? opts.socket : undefined),
    onPolicy: (command, file) =>
      ctl(io, file === undefined ? command : onPolicy(io, command, file)),
    // The policy doctor checked (`--config`) is the one the daemon it suggests should serve,
    // with the state directory given beside it.
    daemon: commandLine(
      io,
      'mcp-rootsd',
      [
        opts.config === undefined ? '' : `--config ${shellQuote(opts.config)}`,
        opts['state-dir'] === undefined ? '' : `--state-dir ${shellQuote(opts['state-dir'])}`,
      ]
        .filter((a) => a !== '')
        .join(' '),
      opts.socket,
    ),
    systemd: opts.socket === undefined,
    notGiven:
      opts.socket === undefined
        ? []
        : [
            ...(opts.config === undefined ? ['--config'] : []),
            ...(opts['state-dir'] === undefined ? ['--state-dir'] : []),
          ],
  };
  checks.push(daemonCheck(status, home, socket.socketPath, cmd));
  const running = !(status instanceof RootsError);
  const policy = await policyCheck(io, opts, running ? status.policy.main : undefined, 10_000_000);
  checks.push(policy.check);
  const needed = running ? status.watches.directories : policy.watches;
  checks.push(
    ...(await inotifyChecks(places.procSys, await inotifyInUse(places.proc, uid), needed, running)),
  );
  checks.push(await systemdCheck(io.env, home, cmd));
  checks.push(await sandboxCheck(io.env, places.procSys, policy.sandbox));
  return checks;
}

export function doctorText(checks: Check[], colour: boolean): string {
  const p = paint(colour);
  const label = { ok: p.green('OK  '), warn: p.yellow('WARN'), fail: p.red('FAIL') };
  const lines: string[] = [];
  // Details name files, directories and what a daemon answered: escaped here, before the colours
  // are added, so that a name's own colour codes cannot pass for these, nor a name's line end
  // start a check line of its own (terminal-text.ts).
  const shown = inLine;
  for (const c of checks) {
    lines.push(`${label[c.verdict]}  ${shown(c.name)}: ${shown(c.detail)}`);
    for (const f of c.fix ?? []) lines.push(`      ${p.dim('fix:')} ${shown(f)}`);
  }
  const failed = checks.filter((c) => c.verdict === 'fail').length;
  lines.push(
    failed === 0
      ? 'Everything mcp-roots needs is here.'
      : `${failed} thing${failed === 1 ? '' : 's'} to fix (FAIL above); warnings are optional.`,
  );
  return `${lines.join('\n')}\n`;
}

/** `rootsctl doctor [--json]`. */
export async function doctor(
  io: Io,
  _args: string[],
  opts: Options,
  places = REAL,
): Promise<ExitCode> {
  const checks = await runDoctor(io, opts, places);
  if (opts.json) io.out(`${JSON.stringify({ checks }, null, 2)}\n`);
  else io.out(doctorText(checks, useColour(io)));
  return checks.some((c) => c.verdict === 'fail') ? EXIT.fail : EXIT.ok;
}

/** `N named servers`, in the singular for one. */
function named(n: number): string {
  return `${n} named server${n === 1 ? '' : 's'}`;
}
