/** mcp-rootsd assembled: state, socket, watchers, grants; one owner closes each of them. */
import { dirname } from 'node:path';
import type { Logger } from './logger.js';
import { decisionLogFile, grantsFile } from '../common/locations.js';
import { packageVersion } from '../common/package-info.js';
import { nodeFs } from '../policies/index.js';
import type { DaemonStatus } from '../protocol/methods.js';
import { removeSocketPointer, writeSocketPointer } from '../protocol/socket-pointer.js';
import {
  DecisionLog,
  DEFAULT_DECISION_LOG_KEEP,
  NO_DECISIONS,
  type DecisionSink,
} from './decision-log.js';
import { GrantStore } from './grants.js';
import { acquireListener, type Listener } from './listen.js';
import type { DaemonOptions } from './options.js';
import { RootsServer } from './server.js';
import { SocketGuard } from './socket-guard.js';
import { recordStateDecisions } from './record-decisions.js';
import { PolicyState } from './state.js';
import { PolicyWatcher } from './watcher.js';
import type { WatchBackend } from './watch-backend.js';
import { rootsctlCommand, statusCommand } from './status-command.js';
import { ensureStateDir, type StateDir } from './state-dir.js';

/** How many servers that no policy entry names `daemon/status` lists (clients may send any). */
const LISTED_UNNAMED = 200;

/** A running daemon. */
export class Daemon {
  private closing: Promise<void> | undefined;
  private readonly startedAt = Date.now();

  private constructor(
    readonly options: DaemonOptions,
    readonly state: PolicyState,
    readonly listener: Listener,
    readonly server: RootsServer,
    readonly watcher: PolicyWatcher,
    private readonly log: Logger,
    /** `guard.lost` resolves when the socket is gone for good: the daemon must then stop. */
    readonly guard: SocketGuard,
    readonly decisions: DecisionSink & { close?: () => Promise<void> },
    /** Checked again for `status`: a replaced directory has its grants and log left unused. */
    private readonly stateDir: StateDir,
  ) {}

  /** `rootsctl status` as the person who started the daemon can run it (daemon/status-command.ts). */
  get statusCommand(): string {
    return this.state.statusCommand;
  }

  /** Load the policy, take the socket, start watching. Fails only when it cannot serve at all. */
  static async start(
    given: DaemonOptions,
    deps: {
      log: Logger;
      env: Record<string, string | undefined>;
      uid: number;
      pid: number;
      /** How directories are watched; tests give one with a small tree cap. */
      watchBackend?: WatchBackend;
    },
  ): Promise<Daemon> {
    const { log } = deps;
    // Before anything reads it: the grants file there is policy. From here on it is reached by the
    // canonical path checked, never through the links `--state-dir` may have named.
    const stateDir = await ensureStateDir(given.stateDir, deps.uid, deps.pid);
    // The socket pointer, the decision log `status` names: each there too.
    const options = { ...given, stateDir: stateDir.path };
    const runtimeDir = dirname(options.socket);
    const status = statusCommand(options.socket, {
      env: deps.env,
      uid: deps.uid,
      cwd: process.cwd(),
    });
    const state = new PolicyState({
      statusCommand: status,
      rootsctl: rootsctlCommand(options.socket, { env: deps.env, uid: deps.uid }),
      configFile: options.configFile,
      grantsFile: grantsFile(stateDir.path),
      stateDir: stateDir.path,
      verifyStateDir: stateDir.verify,
      runtimeDir,
      home: options.home,
      env: deps.env,
      fs: nodeFs(),
      log,
    });
    // Take the socket first: a second daemon must fail before it does any work.
    const listener = await acquireListener(options.socket, {
      ...deps,
      warn: (message) => log.warn(message),
    });
    const decisions =
      options.decisionLogBytes > 0
        ? new DecisionLog({
            file: decisionLogFile(stateDir.path),
            maxBytes: options.decisionLogBytes,
            keep: DEFAULT_DECISION_LOG_KEEP,
            log,
            verifyDir: stateDir.verify,
          })
        : NO_DECISIONS;
    recordStateDecisions(state, decisions);
    // Made before the policy is first resolved: the roots' watches are set before the walk.
    const watcher = new PolicyWatcher({
      state,
      log,
      settleMs: options.settleMs,
      rescanMs: options.rescanMs,
      degradedRescanMs: options.degradedRescanMs,
      configFile: options.configFile,
      grantsFile: grantsFile(stateDir.path),
      backend: deps.watchBackend,
    });
    state.watchFirst = (targets) => watcher.watchFirst(targets);
    try {
      await state.start();
      const grants = new GrantStore({
        state,
        file: grantsFile(stateDir.path),
        dir: stateDir.path,
        verifyStateDir: stateDir.verify,
        log,
        decisions,
        home: options.home,
      });
      // The status handler needs the daemon, which needs the server: tie the knot through a
      // promise. A client can connect as soon as the socket listens, before the daemon is whole.
      let whole!: (d: Daemon) => void;
      const self = new Promise<Daemon>((resolve) => (whole = resolve));
      const server = new RootsServer(listener.server, {
        state,
        log,
        version: packageVersion(),
        settleMs: options.settleMs,
        status: async () => (await self).status(),
        decisions,
        extra: grants.handlers(),
        endedGrant: (server, canonical) => grants.endedGrant(server, canonical),
      });
      await watcher.start();
      // Accept only now: every connection finds a loaded policy and a handler.
      await listener.listen();
      const guard = new SocketGuard({
        listener,
        uid: deps.uid,
        pid: deps.pid,
        log,
        intervalMs: options.rescanMs,
      });
      await guard.start();
      await leavePointer(options, log);
      const daemon = new Daemon(
        options,
        state,
        listener,
        server,
        watcher,
        log,
        guard,
        decisions,
        stateDir,
      );
      whole(daemon);
      log.info(
        `mcp-rootsd ${packageVersion()} listening on ${options.socket}${listener.activated ? ' (socket activation)' : ''}; policy ${options.configFile}`,
      );
      return daemon;
    } catch (err) {
      await watcher.close();
      await state.close();
      await listener.close();
      if (decisions instanceof DecisionLog) await decisions.close();
      throw err;
    }
  }

  /** `daemon/status`, every field of docs/protocol.md. */
  async status(): Promise<DaemonStatus> {
    const { state } = this;
    await state.fresh();
    // Servers the policy names, and those only subscribed to (any name a client sends): the
    // first `LISTED_UNNAMED` of these, so that no client can make the answer too long to read.
    const named = new Set(state.resolved.serverNames());
    const unnamed = [...this.server.subscribedServers].filter((n) => !named.has(n)).sort();
    const names = new Set([...named, ...unnamed.slice(0, LISTED_UNNAMED)]);
    const serversNotListed = Math.max(0, unnamed.length - LISTED_UNNAMED);
    const connections = this.server.connections;
    const servers = [...names].sort().map((name) => {
      const roots = state.roots(name);
      const next = state.lockdown ? undefined : state.resolved.nextExpiryOf(name);
      return {
        name,
        roots: roots.length,
        readOnly: roots.filter((r) => r._meta['mcp-roots/readOnly']).length,
        ...(next !== undefined ? { nextExpiry: new Date(next).toISOString() } : {}),
      };
    });
    const next = state.resolved.nextExpiry;
    const stateDirProblem = await this.stateDir.verify().then(
      () => undefined,
      (err: unknown) => (err instanceof Error ? err.message : String(err)),
    );
    return {
      version: packageVersion(),
      pid: process.pid,
      uptimeSeconds: Math.round((Date.now() - this.startedAt) / 1000),
      socket: this.options.socket,
      policy: {
        main: this.options.configFile,
        grants: state.grantsFile,
        files: state.files,
        revision: state.revision,
        loadedAt: state.loadedAt.toISOString(),
        sha256: state.sha256,
        errors: state.errors,
        warnings: state.warnings,
      },
      servers,
      ...(serversNotListed > 0 ? { serversNotListed } : {}),
      clients: this.server.clientCount,
      subscriptions: this.server.subscriptionCount,
      connections: connections.listed,
      ...(connections.notListed > 0 ? { connectionsNotListed: connections.notListed } : {}),
      lockdown: state.lockdown,
      watches: this.watcher.status(),
      ...(this.options.decisionLogBytes > 0
        ? { decisionLog: decisionLogFile(this.options.stateDir) }
        : {}),
      ...(next !== undefined && !state.lockdown
        ? { nextExpiry: new Date(next).toISOString() }
        : {}),
      ...(stateDirProblem !== undefined ? { stateDirProblem } : {}),
    };
  }

  /** Stop: listeners, connections, watchers, timers; remove our own socket. Same promise each time. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.log.info('mcp-rootsd stopping');
      // Stop accepting first; the listener's close completes once every connection is gone.
      const stopped = this.listener.close();
      const unguarded = this.guard.close();
      await this.server.close();
      await stopped;
      await unguarded;
      await this.watcher.close();
      await this.state.close();
      await this.decisions.close?.();
      // Under socket activation systemd keeps the socket after we exit: the pointer stays true.
      if (!this.listener.activated) {
        await removeSocketPointer(this.options.stateDir, this.options.socket).catch(() => {});
      }
    })();
    return this.closing;
  }
}

/**
 * Tell clients started in another environment where the socket is (protocol/socket-pointer.ts).
 * Without it only they are worse off, so a state directory that cannot be written is a warning.
 */
async function leavePointer(options: DaemonOptions, log: Logger): Promise<void> {
  try {
    await writeSocketPointer(options.stateDir, options.socket);
  } catch (err) {
    log.warn(
      `cannot write the socket pointer in ${options.stateDir} (${String(err)}); clients started without XDG_RUNTIME_DIR may not find this daemon (they can pass --socket ${options.socket})`,
    );
  }
}
