/**
 * What the person sees in the host when the proxy cannot do its job, rather than a session that
 * looks healthy until every call is refused: a `--server` name no entry of the policy names fails
 * every request (the `initialize` of a 2025-era session, `server/discover` and every request of a
 * 2026-07-28 one) with an error that names the policy's servers; an unreachable mcp-rootsd is a
 * warning the host shows (an MCP log message) besides the text of every refusal. A name that only
 * `'*'` covers, or one `--allow-unknown-server` let in, is a warning the host shows too.
 */
import { errorLine, resultLine } from '../protocol/messages.js';
import { RpcCode } from '../protocol/rpc-errors.js';
import type { DaemonLink } from './daemon-link.js';
import { daemonAwayHint } from './hint-commands.js';
import { HostLog } from './host-log.js';
import type { ProxyLogger } from './log.js';
import type { McpLine } from './mcp-line.js';
import { closest } from '../common/levenshtein.js';
import { namingWarning, unknownServerText } from './server-name.js';

export interface SessionHealthOptions {
  server: string;
  link: DaemonLink;
  /** `--allow-unknown-server`: a name the policy lacks only warns (stderr, and the host). */
  allowUnknownServer: boolean;
  log: ProxyLogger;
  /** Write one line to the host. */
  toHost: (line: string) => void;
}

export class SessionHealth {
  private readonly hostLog: HostLog;
  /** Whether the host was told the daemon is away (and so should hear that it is back). */
  private toldAway = false;
  private loggedUnknown = false;
  /** Whether the host was warned about the `--server` name (once a session). */
  private warnedNaming = false;

  constructor(private readonly o: SessionHealthOptions) {
    this.hostLog = new HostLog(o.toHost);
    o.link.on('lost', () => this.daemonAway());
    o.link.on('roots', (_roots, change) => {
      if (change.reconnected) this.warnNaming();
      if (!change.reconnected || !this.toldAway) return;
      this.toldAway = false;
      this.hostLog.send(
        'notice',
        'mcp-rootsd is reachable again: calls are checked against the policy.',
      );
    });
  }

  /**
   * Refuse a host line while `--server` names no entry of the policy: a request is answered with
   * the error, a notification dropped (the server never had a session to hear it in). A ping is
   * still answered by the server. True when the line was refused.
   */
  refusesUnknownServer(line: McpLine): boolean {
    const { link, server, allowUnknownServer, log, toHost } = this.o;
    const named = link.named;
    if (allowUnknownServer || named?.kind !== 'unknown') return false;
    if (line.method === 'ping') return false;
    const text = unknownServerText(server, named.policyServers, link.commands);
    if (!this.loggedUnknown) {
      this.loggedUnknown = true;
      log.error(`refused the host's ${line.method}: ${text}`);
    }
    if (!line.isRequest) return true;
    const near = closest(server, named.policyServers);
    toHost(
      errorLine(line.idText ?? 'null', {
        code: RpcCode.INVALID_PARAMS,
        message: `mcp-roots-proxy: ${text}`,
        data: {
          server,
          policyServers: named.policyServers,
          ...(near !== undefined ? { didYouMean: near } : {}),
        },
      }),
    );
    return true;
  }

  /** The server's `initialize` result as the host gets it: with `logging`, so warnings can come. */
  initializeResult(text: string): string {
    return this.hostLog.initializeResult(text);
  }

  /** The host has the `initialize` result: warn now if the daemon is already away. */
  opened(): void {
    this.hostLog.opened();
    if (!this.o.link.known) this.daemonAway();
    else this.warnNaming();
  }

  /** Warn the host, once, about a `--server` name only `'*'` or `--allow-unknown-server` lets in. */
  private warnNaming(): void {
    const { link, server, allowUnknownServer } = this.o;
    if (this.warnedNaming || link.named === undefined) return;
    const text = namingWarning(server, link.named, allowUnknownServer, link.commands);
    if (text === undefined) return;
    this.warnedNaming = true;
    this.hostLog.send('warning', `mcp-roots-proxy: ${text}`);
  }

  /**
   * The host's `logging/setLevel`: noted for the proxy's own messages. True when the proxy
   * answered it (the server declared no `logging`, so the capability is the proxy's).
   */
  answersSetLevel(line: McpLine): boolean {
    const valid = this.hostLog.setLevel(line.params.level);
    if (this.hostLog.serverLogs) return false;
    const idText = line.idText ?? 'null';
    this.o.toHost(
      valid
        ? resultLine(idText, '{}')
        : errorLine(idText, {
            code: RpcCode.INVALID_PARAMS,
            message: `mcp-roots-proxy: logging/setLevel: level must be one of debug, info, notice, warning, error, critical, alert, emergency`,
          }),
    );
    return true;
  }

  private daemonAway(): void {
    this.toldAway = true;
    // The warning an unreachable daemon gives the host.
    this.hostLog.send(
      'warning',
      `mcp-rootsd is not reachable, so the policy is not known: ${daemonAwayHint(this.o.link.commands)}.`,
    );
  }
}
