/** The commands that talk to a running daemon. */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import { RootsError } from '../common/errors.js';
import { homeDir, tildify } from '../common/locations.js';
import { packageVersion } from '../common/package-info.js';
import { formatPolicyError, type Grant } from '../common/types.js';
import { RootsClient } from '../protocol/client.js';
import type { DaemonStatus, ListChangedParams } from '../protocol/methods.js';
import type { Backend } from './backend.js';
import { parseDuration, parseUntil } from './duration.js';
import { problemLines, rootsTable, timeLeft } from './format.js';
import { columns, emit, EXIT, type ExitCode, type Io } from './io.js';
import type { Options } from './run.js';
import { initPolicy } from './commands/init.js';
import { installService, uninstallService } from './commands/service.js';

/** Connect to the daemon as rootsctl. */
export function connect(io: Io, socket: string | undefined): Promise<RootsClient> {
  return RootsClient.connect({
    // A relative --socket means what it means in the caller's directory.
    socket: socket === undefined ? undefined : resolve(io.cwd, socket),
    env: io.env,
    clientInfo: { name: 'rootsctl', version: packageVersion() },
  });
}

/** A backend that asks the daemon. */
export async function onlineBackend(io: Io, socket: string | undefined): Promise<Backend> {
  const client = await connect(io, socket);
  return {
    list: (server) => client.listRoots(server),
    check: (server, path, access) => client.check(server, path, access),
    explain: (server) => client.explain(server),
    serverNames: async () => {
      // `daemon/status` also lists names that are only subscribed to (a proxy's --server typo
      // among them): keep those some entry of the policy gives roots.
      const names = (await client.status()).servers.map((s) => s.name);
      const explained = await Promise.all(names.map((n) => client.explain(n)));
      return names.filter((_, i) => explained[i]!.rules.some((r) => r.kind === 'root'));
    },
    close: () => client.close(),
  };
}

/** Run one of the daemon commands (and init/install-service, which need none). */
export async function daemonCommand(
  io: Io,
  command: string,
  args: string[],
  opts: Options,
): Promise<ExitCode> {
  const json = opts.json ?? false;
  if (command === 'init')
    return initPolicy(io, { force: opts.force ?? false, config: opts.config });
  if (command === 'install-service')
    return installService(io, { dryRun: opts['dry-run'] ?? false });
  if (command === 'uninstall-service')
    return uninstallService(io, { dryRun: opts['dry-run'] ?? false });
  if (command === 'grant') {
    // Validate locally before connecting, so a typo is a usage error even with no daemon.
    const path = resolve(io.cwd, args[1]!);
    const lifetime =
      opts.until !== undefined
        ? { expires: parseUntil(opts.until) }
        : { seconds: parseDuration(opts.for ?? '1h') };
    if (args[0]!.includes('*')) {
      throw new RootsError(
        'USAGE',
        `a grant names one server exactly; "${args[0]}" has a *. Put patterns in the policy file.`,
      );
    }
    let real: string;
    try {
      real = realpathSync(path);
    } catch {
      throw new RootsError(
        'PATH_NOT_FOUND',
        `${path} does not exist; a grant needs an existing file or directory`,
      );
    }
    const client = await connect(io, opts.socket);
    try {
      const result = await client.grant(args[0]!, real, {
        ...lifetime,
        ...(opts['read-only'] ? { readOnly: true } : {}),
        ...(opts.name !== undefined ? { name: opts.name } : {}),
      });
      emit(
        io,
        json,
        result,
        (r) => grantLine(r.grant, io) + (r.notice ? `note: ${r.notice}\n` : ''),
      );
      return EXIT.ok;
    } finally {
      await client.close();
    }
  }
  const client = await connect(io, opts.socket);
  try {
    switch (command) {
      case 'status': {
        const status = await client.status();
        emit(io, json, status, (s) => statusText(s, homeDir(io.env)));
        return status.policy.errors.length > 0 ? EXIT.fail : EXIT.ok;
      }
      case 'reload': {
        const result = await client.reload();
        emit(io, json, result, (r) =>
          r.ok
            ? `policy reloaded (revision ${r.revision})\n${problemLines('warning', r.warnings, homeDir(io.env))}`
            : `${problemLines('error', r.errors, homeDir(io.env))}the policy has errors; the daemon keeps serving the last valid one\n`,
        );
        return result.ok ? EXIT.ok : EXIT.fail;
      }
      case 'watch':
        return await watch(io, client, args[0]!, json, opts.socket);
      case 'grants': {
        const result = await client.grants();
        emit(io, json, result, (r) => grantsTable(r.grants, io));
        return EXIT.ok;
      }
      case 'revoke': {
        const path = args[1] === undefined ? undefined : resolve(io.cwd, args[1]);
        let target = path;
        if (path !== undefined) {
          try {
            target = realpathSync(path);
          } catch {
            target = path; // a vanished path can still be revoked by the name it was granted under
          }
        }
        const result = await client.revoke(args[0]!, target);
        emit(
          io,
          json,
          result,
          (r) => `revoked ${r.revoked} grant${r.revoked === 1 ? '' : 's'} of ${args[0]!}\n`,
        );
        return result.revoked > 0 ? EXIT.ok : EXIT.fail;
      }
      case 'lockdown':
      case 'unlock': {
        const result = await client.lockdown(command === 'lockdown');
        emit(io, json, result, (r) =>
          r.lockdown
            ? 'lockdown on: every server has no roots and every access is refused. `rootsctl unlock` ends it.\n'
            : 'lockdown off: the policy applies again.\n',
        );
        return EXIT.ok;
      }
      default:
        throw new RootsError('USAGE', `unknown command "${command}"`);
    }
  } finally {
    await client.close();
  }
}

/** Waits between attempts to reach a restarted daemon: 100 ms, doubling, at most 2 s. */
const WATCH_BACKOFF = { min: 100, max: 2000 };

/**
 * `rootsctl watch SERVER`: print the roots now and at each change until interrupted. When the
 * daemon goes away (a restart), reconnect with backoff and follow SERVER again.
 */
async function watch(
  io: Io,
  first: RootsClient,
  server: string,
  json: boolean,
  socket: string | undefined,
): Promise<ExitCode> {
  const home = homeDir(io.env);
  const print = (p: { server: string; revision: number; roots: ListChangedParams['roots'] }) => {
    if (json) io.out(`${JSON.stringify(p)}\n`);
    else
      io.out(
        `[${new Date().toISOString()}] revision ${p.revision}\n${rootsTable(server, p.roots, home, Date.now())}`,
      );
  };
  const interrupted = (io.interrupted?.() ?? new Promise<never>(() => {})).then(
    () => 'interrupted' as const,
  );
  let client = first;
  let restarted = false;
  try {
    for (;;) {
      // Listen for the close before asking, so that a close during the request is not missed.
      const closed = new Promise<string>((resolve) => {
        if (client.closed) resolve('closed');
        else client.once('close', resolve);
      });
      client.on('list_changed', (p) => {
        if (p.server === server) print(p);
      });
      try {
        const list = await client.listRoots(server, { subscribe: true });
        if (restarted && !json)
          io.out(`[${new Date().toISOString()}] mcp-rootsd restarted; following ${server} again\n`);
        print({ server, revision: list._meta['mcp-roots/revision'], roots: list.roots });
      } catch (err) {
        // The daemon went away again before answering: reconnect; any other failure ends watch.
        if (!(restarted && client.closed)) throw err;
      }
      const how = await Promise.race([closed, interrupted]);
      if (how === 'interrupted') return EXIT.ok;
      if (!json) io.err(`rootsctl: lost mcp-rootsd (${how}); reconnecting\n`);
      const next = await reconnect(io, socket, interrupted);
      if (next === 'interrupted') return EXIT.ok;
      if (client !== first) await client.close();
      client = next;
      restarted = true;
    }
  } finally {
    if (client !== first) await client.close();
  }
}

/** Connect again and again (with backoff) until the daemon answers or the user interrupts. */
async function reconnect(
  io: Io,
  socket: string | undefined,
  interrupted: Promise<'interrupted'>,
): Promise<RootsClient | 'interrupted'> {
  for (let delay = WATCH_BACKOFF.min; ; delay = Math.min(delay * 2, WATCH_BACKOFF.max)) {
    let timer: NodeJS.Timeout | undefined;
    const waited = await Promise.race([
      new Promise<'waited'>((resolve) => (timer = setTimeout(() => resolve('waited'), delay))),
      interrupted,
    ]);
    clearTimeout(timer);
    if (waited === 'interrupted') return waited;
    try {
      return await connect(io, socket);
    } catch (err) {
      // Not there yet: try again later; anything else (a foreign socket directory) ends watch.
      if (!(
        err instanceof RootsError &&
        (err.code === 'DAEMON_UNREACHABLE' || err.code === 'TIMEOUT')
      ))
        throw err;
    }
  }
}

function grantLine(g: Grant, io: Io): string {
  const home = homeDir(io.env);
  return `granted ${g.server} ${g.readOnly ? 'read-only' : 'read-write'} access to ${tildify(g.path, home)} until ${g.expires} (${timeLeft(g.expires, Date.now())})\n`;
}

function grantsTable(grants: Grant[], io: Io): string {
  if (grants.length === 0) return 'No temporary grants.\n';
  const home = homeDir(io.env);
  const rows = [['SERVER', 'PATH', 'ACCESS', 'EXPIRES', 'LEFT']];
  for (const g of grants) {
    rows.push([
      g.server,
      tildify(g.path, home),
      g.readOnly ? 'read-only' : 'read-write',
      g.expires,
      timeLeft(g.expires, Date.now()),
    ]);
  }
  return columns(rows);
}

/** `rootsctl status` for people: everything at a glance. */
export function statusText(s: DaemonStatus, home: string): string {
  const lines: string[] = [];
  lines.push(`mcp-rootsd ${s.version}, pid ${s.pid}, up ${uptime(s.uptimeSeconds)}`);
  lines.push(`socket:   ${tildify(s.socket, home)}`);
  lines.push(
    `policy:   ${s.policy.files.map((f) => tildify(f, home)).join(', ') || '(no policy file: no roots)'}; revision ${s.policy.revision}, loaded ${s.policy.loadedAt}`,
  );
  if (s.lockdown) lines.push('LOCKDOWN: every server has no roots; `rootsctl unlock` ends it');
  for (const e of s.policy.errors) {
    lines.push(`ERROR:    ${formatPolicyError({ ...e, file: tildify(e.file, home) })}`);
  }
  if (s.policy.errors.length > 0)
    lines.push('          (the last valid policy keeps serving until this is fixed)');
  if (s.policy.warnings.length > 0) {
    lines.push(`warnings: ${s.policy.warnings.length} (\`rootsctl validate\` lists them)`);
  }
  lines.push(
    `watches:  ${s.watches.directories} directories, ${s.watches.mode}${s.watches.degraded.length ? `; degraded (rescanned): ${s.watches.degraded.join(', ')}` : ''}`,
  );
  if (s.nextExpiry) lines.push(`next expiry: ${s.nextExpiry}`);
  lines.push('');
  if (s.servers.length === 0) lines.push('No servers in the policy.');
  else {
    const rows = [['SERVER', 'ROOTS', 'READ-ONLY', 'NEXT EXPIRY']];
    for (const srv of s.servers)
      rows.push([srv.name, String(srv.roots), String(srv.readOnly), srv.nextExpiry ?? '-']);
    lines.push(columns(rows).trimEnd());
  }
  lines.push('');
  lines.push(`clients: ${s.clients}, subscriptions: ${s.subscriptions}`);
  if (s.connections.length > 0) {
    const rows = [['CLIENT', 'SUBSCRIBED TO']];
    for (const c of s.connections) rows.push([c.client, c.subscriptions.join(', ') || '-']);
    lines.push(columns(rows).trimEnd());
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
