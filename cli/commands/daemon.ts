/** `status`, `reload`, `lockdown` and `unlock`: the daemon itself. */
import { homeDir } from '../../common/locations.js';
import { withClient } from '../connect.js';
import { problemLines } from '../format.js';
import { ctl } from '../hint.js';
import { emit, EXIT, type ExitCode, type Io } from '../io.js';
import { lockdownLine } from '../state-notes.js';
import type { Options } from '../options.js';
import { neverValid, statusText } from '../status-text.js';
import { inLine } from '../terminal-text.js';

/** `rootsctl status`: exit 1 while the policy on disk has errors. */
export function status(io: Io, _args: string[], opts: Options): Promise<ExitCode> {
  return withClient(io, opts.socket, async (client) => {
    const s = await client.status();
    emit(io, opts.json ?? false, s, (x) =>
      statusText(x, homeDir(io.env), lockdownLine(io, opts.socket)),
    );
    // A state directory the daemon no longer uses is an error too (an addition to the status).
    return s.policy.errors.length > 0 || typeof s.stateDirProblem === 'string'
      ? EXIT.fail
      : EXIT.ok;
  });
}

/** `rootsctl reload`: exit 1 when the policy has errors (the last valid one keeps serving). */
export function reload(io: Io, _args: string[], opts: Options): Promise<ExitCode> {
  return withClient(io, opts.socket, async (client) => {
    const home = homeDir(io.env);
    const result = await client.reload();
    const none = !result.ok && neverValid(await client.status());
    emit(io, opts.json ?? false, result, (r) =>
      r.ok
        ? `policy reloaded (revision ${r.revision})\n${problemLines('warning', r.warnings, home)}`
        : `${problemLines('error', r.errors, home)}the policy has errors; ${none ? 'no valid policy has loaded since mcp-rootsd started, so every server has no roots' : 'the daemon keeps serving the last valid one'}\n`,
    );
    return result.ok ? EXIT.ok : EXIT.fail;
  });
}

function setLockdown(on: boolean) {
  return (io: Io, _args: string[], opts: Options): Promise<ExitCode> =>
    withClient(io, opts.socket, async (client) => {
      const result = await client.lockdown(on);
      emit(io, opts.json ?? false, result, (r) =>
        r.lockdown
          ? `lockdown on: every server has no roots and every access is refused. \`${ctl(io, 'unlock', opts.socket)}\` ends it, and brings back the grants that have not expired (\`${ctl(io, 'grants', opts.socket)}\` lists them; revoke first what should not return).\n` +
            (typeof r.notice === 'string' ? `note: ${inLine(r.notice)}\n` : '')
          : 'lockdown off: the policy and the grants that have not expired apply again.\n',
      );
      return EXIT.ok;
    });
}

/** `rootsctl lockdown`. */
export const lockdown = setLockdown(true);
/** `rootsctl unlock`. */
export const unlock = setLockdown(false);
