/** The server's roots: answering its `roots/list` with the policy's, and telling it when they change. */
import { realpath, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Root } from '../common/types.js';
import { memberText, removeMember, setMember } from '../protocol/json-text.js';
import { notificationLine, resultLine } from '../protocol/messages.js';
import type { DaemonLink, RootsChange } from './daemon-link.js';
import type { ProxyLogger } from './log.js';
import type { McpLine } from './mcp-line.js';
import { RecentKeys } from './recent-keys.js';
import type { RootsHold } from './roots-hold.js';

/** The first MCP revision whose `Root` has `_meta`. */
const ROOT_META_SINCE = '2025-06-18';

/** What the server's roots need from the rest of the proxy. */
export interface ServerRootsOptions {
  link: DaemonLink;
  hold: RootsHold;
  log: ProxyLogger;
  /** How long the server's `roots/list` waits for an unreachable daemon. */
  rootsWaitMs: number;
  /** Write one line to the server. */
  toServer: (line: string) => void;
  /** The longest calls wait for the server to fetch and apply a list (the hold's own limit). */
  holdMs: number;
  /** Send the server a `ping` of the proxy's own; resolves on its answer. */
  ping: () => Promise<unknown>;
}

/** A moment more for the server to apply a list, after its loop has gone round (`applied`). */
const APPLY_GRACE_MS = 50;

/** How many of the slowest ping's round trips the grace lasts at least (`applied`). */
const GRACE_PER_PING = 4;

/** The most pings `whenServed` sends to let a server apply a list (and roots it checks itself). */
const MAX_SETTLE_PINGS = 32;

/** The checks a server makes of each root it is given, one after the other. */
async function checkLikeAServer(uris: string[]): Promise<void> {
  for (const uri of uris) {
    try {
      await stat(await realpath(fileURLToPath(uri)));
    } catch {
      // A root the server cannot check either: it skips it as fast.
    }
  }
}

/** Answers the server's roots requests in the host's place. */
export class ServerRoots {
  /** The negotiated protocol version (the host's request until the server answers). */
  protocolVersion: string | undefined;
  private initialized = false;
  /** Set when the daemon's list changed after the server fetched it but before `initialized`. */
  private notifyPending = false;
  private served = false;
  /** The server asked for its roots and the answer is not sent yet. */
  private fetching = false;
  /** Calls wait for the server to apply its first list (holdForFirstFetch). */
  private firstFetchHeld = false;
  /** The URIs of the list the server fetched last, and who waits for one of them. */
  private servedUris = new Set<string>();
  private readonly servedWaiters = new Set<() => void>();
  /** Server requests the proxy answers (or is about to): their ids, and their progress tokens. */
  private readonly answered = new RecentKeys();
  private readonly cancelled = new RecentKeys();
  private readonly answeredTokens = new RecentKeys();

  constructor(private readonly options: ServerRootsOptions) {
    options.link.on('roots', (_roots, change) => this.onDaemonRoots(change));
    options.link.on('lost', () => this.onDaemonLost());
  }

  /** The session has begun (`notifications/initialized`): send the change notice it missed, if any. */
  onInitialized(): void {
    this.initialized = true;
    if (!this.served && !this.fetching && this.hasRoots) void this.holdForFirstFetch();
    if (this.notifyPending) {
      this.notifyPending = false;
      this.notifyServer();
    }
  }

  /** Answer the server's `roots/list` (the host never sees it). */
  onRootsList(line: McpLine): void {
    const idText = line.idText ?? 'null';
    const key = line.idKey;
    this.answered.add(key);
    this.answeredTokens.add(line.progressTokenKey);
    this.fetching = true;
    void this.answerRootsList(idText, key).finally(() => (this.fetching = false));
  }

  /** Whether a cancellation from the server names a request the proxy answers (it is then not relayed). */
  consumeCancel(key: string | undefined): boolean {
    if (!this.answered.has(key)) return false;
    this.cancelled.add(key);
    return true;
  }

  /** Whether a progress token belongs to a server request the proxy answered: the host never saw it. */
  answeredToken(key: string | undefined): boolean {
    return this.answeredTokens.has(key);
  }

  /** The result of `roots/list` as JSON text, shaped for the negotiated revision. */
  answerText(): string {
    return JSON.stringify({ roots: this.shaped(this.options.link.roots ?? []) });
  }

  /** Like `answerText`, after waiting a while for a daemon whose list is not known yet. */
  async answerTextWhenKnown(): Promise<string> {
    const { link, rootsWaitMs } = this.options;
    const roots = link.roots ?? (await link.whenKnown(rootsWaitMs));
    return JSON.stringify({ roots: this.shaped(roots ?? []) });
  }

  /** Whether the server should be told the host has roots: unless the policy gives it none. */
  get hasRoots(): boolean {
    const roots = this.options.link.roots;
    // Unknown (daemon away): announce them; the server then gets an empty list, failing closed.
    return roots === undefined || roots.length > 0;
  }

  /**
   * A server that reads its roots asks for them when the session begins (the filesystem server
   * does), and a call the host makes at once would otherwise reach it before it has them: it then
   * refuses every path, or lists no directory. So calls wait (`hold`) until the server's first
   * list is answered and applied. Whether a server will ask is known by a ping sent after
   * `initialized`: a server that asks on `initialized` has written its `roots/list` before it
   * answers the ping. One that has not asked by then is not waited for (it is told its roots
   * some other way, or not at all); the hold's own limit bounds the wait either way.
   */
  private async holdForFirstFetch(): Promise<void> {
    const { hold, ping, holdMs } = this.options;
    hold.close();
    const generation = hold.generation;
    this.firstFetchHeld = true;
    try {
      await ping().catch(() => undefined);
      if (!this.served && !this.fetching) return;
      if (!this.served && !(await this.servedWithin(() => true, holdMs, 'its first roots'))) return;
      await this.applied(holdMs);
    } finally {
      this.firstFetchHeld = false;
      // A change since has a list of its own coming, which ends the hold once applied.
      hold.open(generation);
    }
  }

  private async answerRootsList(idText: string, key: string | undefined): Promise<void> {
    const { link, log, hold, toServer } = this.options;
    const roots = link.roots ?? (await link.whenKnown(this.options.rootsWaitMs));
    if (this.cancelled.has(key)) return;
    if (roots === undefined) {
      log.warn('answered the server’s roots/list with an empty list: mcp-rootsd is not reachable');
    }
    this.served = true;
    toServer(resultLine(idText, JSON.stringify({ roots: this.shaped(roots ?? []) })));
    this.servedUris = new Set((roots ?? []).map((r) => r.uri));
    for (const wake of [...this.servedWaiters]) wake();
    // The first list's hold is opened once the server has applied it (holdForFirstFetch).
    if (roots !== undefined && !this.firstFetchHeld) void this.openWhenApplied(hold.generation);
  }

  /**
   * End the hold once the server has most likely applied the list just answered, unless a change
   * came since. Until then a call whose check already passes would reach a server that still has
   * the old list (a grant's second call, made while the first waited for the person's answer).
   */
  private async openWhenApplied(generation: number): Promise<void> {
    const { hold, holdMs } = this.options;
    if (!hold.closed) return;
    await this.applied(holdMs);
    hold.open(generation);
  }

  /**
   * Resolves once the server has fetched a list holding `uri` and most likely applied it; at once
   * for a server that never fetches its roots (it is told them some other way, or not at all).
   * Each wait is limited to `limitMs`.
   */
  async whenServed(uri: string, limitMs: number): Promise<void> {
    if (!this.initialized || !this.served) return;
    const holdsUri = (): boolean => this.servedUris.has(uri);
    if (!holdsUri() && !(await this.servedWithin(holdsUri, limitMs, `the roots with ${uri}`)))
      return;
    await this.applied(limitMs);
  }

  /**
   * Resolves once the server has most likely applied the list it fetched last. No message says a
   * server has applied a list, and a fixed grace runs out on a busy machine: a server checks each
   * root first (the filesystem server awaits a realpath and a stat per root, one after the other,
   * in its I/O threads). The proxy waits while the server's loop goes round twice per root (a
   * ping's answer each) and while it makes the same checks itself on the same machine: no proof,
   * but a wait that grows with the load instead of a constant.
   */
  private async applied(limitMs: number): Promise<void> {
    const uris = [...this.servedUris];
    const deadline = Date.now() + limitMs;
    let slowest = 0;
    const pings = async (): Promise<void> => {
      for (let i = 0; i < Math.min(2 * uris.length, MAX_SETTLE_PINGS); i++) {
        if (Date.now() >= deadline) return;
        const sent = performance.now();
        await this.options.ping().catch(() => undefined);
        slowest = Math.max(slowest, performance.now() - sent);
      }
    };
    await Promise.all([pings(), checkLikeAServer(uris.slice(0, MAX_SETTLE_PINGS))]);
    // The grace grows with the slowest ping: on a loaded machine the server's I/O threads and
    // its loop wait their turn too, and a fixed 50 ms let a first call through before the
    // filesystem server had its roots (a CI run beside other work, once).
    const grace = Math.max(APPLY_GRACE_MS, GRACE_PER_PING * slowest);
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, Math.min(grace, deadline - Date.now()))),
    );
  }

  /**
   * Whether the server is answered a list that passes `holds` within `limitMs` (`what` names it
   * in the log when none comes).
   */
  private servedWithin(holds: () => boolean, limitMs: number, what: string): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const done = (got: boolean): void => {
        clearTimeout(timer);
        this.servedWaiters.delete(wake);
        resolve(got);
      };
      const wake = (): void => {
        if (holds()) done(true);
      };
      const timer = setTimeout(() => {
        this.options.log.debug(`the server did not fetch ${what} within ${limitMs} ms`);
        done(false);
      }, limitMs);
      this.servedWaiters.add(wake);
    });
  }

  private shaped(roots: Root[]): object[] {
    const v = this.protocolVersion;
    if (v !== undefined && v < ROOT_META_SINCE) {
      return roots.map((r) =>
        r.name === undefined ? { uri: r.uri } : { uri: r.uri, name: r.name },
      );
    }
    return roots;
  }

  private onDaemonRoots(change: RootsChange): void {
    if (!this.initialized) {
      // A server fetches its roots after initialized anyway; only a list it already has is stale.
      if (this.served) this.notifyPending = true;
      return;
    }
    if (change.added.length > 0 || change.reconnected) this.options.hold.close();
    this.notifyServer();
  }

  private onDaemonLost(): void {
    // The roots are no longer known: tell the server, whose roots/list will then wait and get [].
    if (this.initialized) this.notifyServer();
  }

  private notifyServer(): void {
    this.options.toServer(notificationLine('notifications/roots/list_changed'));
  }
}

/**
 * An `initialize` request's text announcing `roots: {listChanged: true}`, the rest byte for byte
 * but answers to input requests (`inputResponses`, `requestState`): none was asked yet, and a
 * lenient server would take the host's roots from them (an attacker pass; restarted servers are
 * given these params again).
 */
export function withRootsCapability(text: string): string {
  const given = memberText(text, 'params') ?? '{}';
  const paramsText = removeMember(removeMember(given, 'inputResponses'), 'requestState');
  const caps = memberText(paramsText, 'capabilities');
  const capsText = caps !== undefined && caps.startsWith('{') ? caps : '{}';
  const newCaps = setMember(capsText, 'roots', '{"listChanged":true}');
  return setMember(text, 'params', setMember(paramsText, 'capabilities', newCaps));
}
