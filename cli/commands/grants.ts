/** `grant`, `revoke` and `grants`: temporary access, kept by the daemon. */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { RootsError } from '../../common/errors.js';
import { homeDir, tildify } from '../../common/locations.js';
import type { Grant } from '../../common/types.js';
import { withClient } from '../connect.js';
import { parseDuration, parseUntil } from '../duration.js';
import { localTime, timeLeft, unnamedGrantLine } from '../format.js';
import { columns, emit, EXIT, type ExitCode, type Io } from '../io.js';
import { daemonStateNotes, showNote } from '../state-notes.js';
import { pathArgument } from '../path-argument.js';
import { onPolicy } from '../on-policy.js';
import { ctl } from '../hint.js';
import { daemonServerNames } from '../backend.js';
import { inLine } from '../terminal-text.js';
import type { Options } from '../options.js';

/** `rootsctl grant SERVER PATH [--for D | --until T] [--read-only] [--name N]`. */
export async function grant(io: Io, [server, given]: string[], opts: Options): Promise<ExitCode> {
  // Validate locally before connecting, so a typo is a usage error even with no daemon.
  if (opts.for !== undefined && opts.until !== undefined)
    throw new RootsError('USAGE', 'give --for or --until, not both');
  const path = pathArgument(io, given!);
  const lifetime =
    opts.until !== undefined
      ? { expires: parseUntil(opts.until) }
      : { seconds: parseDuration(opts.for ?? '1h') };
  if (server!.includes('*')) {
    throw new RootsError(
      'USAGE',
      `a grant names one server exactly; "${server}" has a *. Put patterns in the policy file.`,
    );
  }
  // Canonical here, where a relative path means what the person typed. A path that cannot be
  // resolved goes as typed, made absolute: the daemon refuses it (PATH_NOT_FOUND) and records
  // the refusal in the decision log, as it does every refused grant.
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    real = resolve(path);
  }
  return withClient(io, opts.socket, async (client) => {
    // A name the policy does not cover is granted (a server may live on grants alone), but said:
    // it is most likely a typo, and the grant then goes to nobody.
    const before = await client.explain(server!);
    const unknown = before.coveredBy === undefined && before.declared === false;
    const result = await client.grant(server!, real, {
      ...lifetime,
      ...(opts['read-only'] ? { readOnly: true } : {}),
      ...(opts.name !== undefined ? { name: opts.name } : {}),
    });
    emit(
      io,
      opts.json ?? false,
      result,
      (r) => grantLine(r.grant, io) + (r.notice ? `note: ${inLine(r.notice)}\n` : ''),
    );
    if (unknown) {
      const known = (await daemonServerNames(client)).filter((n) => n !== server);
      io.err(`rootsctl: note: ${unnamedGrantLine(server!, known)}`);
    }
    return EXIT.ok;
  });
}

/** `rootsctl revoke SERVER [PATH]`: exit 1 when there was nothing to revoke. */
export function revoke(io: Io, [server, given]: string[], opts: Options): Promise<ExitCode> {
  // Lexically normal: a path that no longer exists is still matched by the name it had.
  let target = given === undefined ? undefined : resolve(pathArgument(io, given));
  if (target !== undefined) {
    try {
      target = realpathSync(target);
    } catch {
      // a vanished path can still be revoked by the name it was granted under
    }
  }
  return withClient(io, opts.socket, async (client) => {
    const result = await client.revoke(server!, target);
    // Nothing revoked: the roots may be the policy's, changed in the file that daemon serves.
    const main =
      result.revoked === 0 && !(opts.json ?? false)
        ? await client.status().then(
            (s) => s.policy.main,
            () => undefined,
          )
        : undefined;
    const edit = ctl(io, main === undefined ? 'edit' : onPolicy(io, 'edit', main));
    emit(io, opts.json ?? false, result, (r) =>
      r.revoked === 0
        ? `no grant of ${inLine(server!)}${target === undefined ? '' : ` for ${inLine(tildify(target, homeDir(io.env)))}`} to revoke (\`${ctl(io, 'grants', opts.socket)}\` lists them; roots the policy gives are changed with \`${inLine(edit)}\`)\n`
        : `revoked ${inLine(r.revoked)} grant${r.revoked === 1 ? '' : 's'} of ${inLine(server!)}\n`,
    );
    return result.revoked > 0 ? EXIT.ok : EXIT.fail;
  });
}

/** `rootsctl grants`. */
export function grants(io: Io, _args: string[], opts: Options): Promise<ExitCode> {
  return withClient(io, opts.socket, async (client) => {
    const result = await client.grants();
    // A grant gives nothing during lockdown: say so beside them.
    const json = opts.json ?? false;
    showNote(io, json, await daemonStateNotes(io, client, opts.socket));
    emit(io, json, result, (r) => grantsTable(r.grants, io));
    return EXIT.ok;
  });
}

function grantLine(g: Grant, io: Io): string {
  const home = homeDir(io.env);
  return `granted ${inLine(g.server)} ${g.readOnly ? 'read-only' : 'read-write'} access to ${inLine(tildify(g.path, home))} until ${localTime(g.expires)} (${timeLeft(g.expires, Date.now())})\n`;
}

function grantsTable(list: Grant[], io: Io): string {
  if (list.length === 0) return 'No temporary grants.\n';
  const home = homeDir(io.env);
  const rows = [['SERVER', 'PATH', 'ACCESS', 'EXPIRES', 'LEFT']];
  for (const g of list) {
    rows.push([
      g.server,
      tildify(g.path, home),
      g.readOnly ? 'read-only' : 'read-write',
      localTime(g.expires),
      timeLeft(g.expires, Date.now()),
    ]);
  }
  return columns(rows);
}
