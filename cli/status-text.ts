/** `rootsctl status` for people: everything at a glance. */
import { dirname } from 'node:path';
import { tildify } from '../common/locations.js';
import type { DaemonStatus } from '../protocol/methods.js';
import { localTime, problemLine } from './format.js';
import { columns } from './io.js';
import { inLine } from './terminal-text.js';

/** Whether the daemon has never loaded a valid policy since it started (only errors so far). */
export function neverValid(s: DaemonStatus): boolean {
  return s.policy.files.length === 0 && s.policy.errors.length > 0;
}

/** `lockdown`: the line to show while the daemon is in lockdown (it names the way out). */
export function statusText(s: DaemonStatus, home: string, lockdown: string): string {
  const lines: string[] = [];
  // Every value is the daemon's, and paths in it may be any directory's name: one line each.
  const shown = (e: DaemonStatus['policy']['errors'][number]) => problemLine(e, home);
  const path = (p: string) => inLine(tildify(p, home));
  // Lockdown first, as in every command that shows roots.
  if (s.lockdown) lines.push(lockdown.trimEnd());
  lines.push(
    `mcp-rootsd ${inLine(s.version)}, pid ${inLine(s.pid)}, up ${inLine(uptime(s.uptimeSeconds))}`,
  );
  lines.push(`socket:   ${path(s.socket)}`);
  // Grants, lockdown and the decision log live there (the grants file is an addition).
  if (typeof s.policy.grants === 'string')
    lines.push(`state:    ${path(dirname(s.policy.grants))}`);
  lines.push(
    neverValid(s)
      ? 'policy:   none valid since start: every server has no roots'
      : `policy:   ${s.policy.files.map(path).join(', ') || '(no policy file: no roots)'}; revision ${inLine(s.policy.revision)}, loaded ${localTime(s.policy.loadedAt)}`,
  );
  // A main file not in force gives no roots; only grants (or nothing) are left. It is either gone,
  // or has had errors since the daemon started (then there is no last valid version to keep).
  const main = s.policy.main;
  if (typeof main === 'string' && !s.policy.files.includes(main) && !neverValid(s)) {
    lines.push(
      s.policy.errors.some((e) => e.file === main)
        ? `          (${path(main)} has not loaded since start: its roots and denies are not in force)`
        : `          (${path(main)} does not exist: its roots and denies are gone)`,
    );
  }
  // An addition: the state directory the daemon no longer uses. A reload since then says the
  // same of the grants file in it, where nothing can be fixed: said once, here, with its way out.
  const stateDir = typeof s.stateDirProblem === 'string' ? s.stateDirProblem : undefined;
  if (stateDir !== undefined) {
    lines.push(`ERROR:    ${inLine(stateDir)}`);
    lines.push('          (its grants are not used and no decisions are recorded until a restart)');
  }
  const errors = s.policy.errors.filter((e) => e.message !== stateDir);
  for (const e of errors) lines.push(`ERROR:    ${shown(e)}`);
  // The grants file fails closed (daemon/state.ts): none of its grants serve while it has errors.
  const grantsErrors = errors.filter((e) => e.file === s.policy.grants).length;
  if (grantsErrors > 0) {
    lines.push('          (no grants serve until the grants file is fixed or moved away)');
  }
  if (errors.length > grantsErrors) {
    lines.push(
      neverValid(s)
        ? '          (no policy serves until this is fixed; a saved fix loads by itself)'
        : '          (the last valid policy keeps serving until this is fixed)',
    );
  }
  for (const w of s.policy.warnings) lines.push(`warning:  ${shown(w)}`);
  // `above` is an addition: an older daemon does not send it.
  const above =
    typeof s.watches.above === 'number' ? ` (and ${inLine(s.watches.above)} above them)` : '';
  lines.push(
    `watches:  ${inLine(s.watches.directories)} directories${above}, ${inLine(s.watches.mode)}${s.watches.degraded.length ? `; degraded (rescanned): ${s.watches.degraded.map(path).join(', ')}` : ''}`,
  );
  if (s.nextExpiry) lines.push(`next expiry: ${localTime(s.nextExpiry)}`);
  lines.push('');
  if (s.servers.length === 0) lines.push('No servers in the policy.');
  else {
    const rows = [['SERVER', 'ROOTS', 'READ-ONLY', 'NEXT EXPIRY']];
    for (const srv of s.servers)
      rows.push([
        srv.name,
        String(srv.roots),
        String(srv.readOnly),
        srv.nextExpiry === undefined ? '-' : localTime(srv.nextExpiry),
      ]);
    lines.push(columns(rows).trimEnd());
  }
  lines.push('');
  lines.push(`clients: ${inLine(s.clients)}, subscriptions: ${inLine(s.subscriptions)}`);
  if (s.connections.length > 0) {
    const rows = [['CLIENT', 'SUBSCRIBED TO']];
    for (const c of s.connections) {
      const more = c.more === undefined ? '' : `, and ${c.more} more`;
      rows.push([c.client, `${c.subscriptions.join(', ') || '-'}${more}`]);
    }
    lines.push(columns(rows).trimEnd());
    if (s.connectionsNotListed !== undefined)
      lines.push(`and ${s.connectionsNotListed} more connections`);
  }
  return `${lines.join('\n')}\n`;
}

function uptime(seconds: number): string {
  if (seconds < 60) return `${seconds}s`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 86400)
    return `${Math.floor(seconds / 3600)}h ${Math.floor((seconds % 3600) / 60)}m`;
  return `${Math.floor(seconds / 86400)}d ${Math.floor((seconds % 86400) / 3600)}h`;
}
