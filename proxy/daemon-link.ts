/** A lasting link to mcp-rootsd for one server name: its roots, its tool rules, checks; reconnects with backoff. */
import { EventEmitter } from 'node:events';
import { RootsError } from '../common/errors.js';
import type {
  Access,
  AskRule,
  CheckResult,
  DenyMeta,
  ExplainResult,
  Grant,
  LaunchRule,
  Root,
  SandboxRule,
  ToolRule,
  Writer,
} from '../common/types.js';
import { RootsClient } from '../protocol/client.js';
import { DEFAULT_MAX_LINE_BYTES } from '../protocol/framer.js';
import type { ListChangedParams, ParamsOf } from '../protocol/methods.js';
import { Reconnector } from '../protocol/reconnect.js';
import { untilCancelled } from './abortable.js';
import type { ProxyLogger } from './log.js';
import { BARE_COMMANDS, startHint, type HintCommands } from './hint-commands.js';
import { namingWarning, type ServerNaming } from './server-name.js';
import { fitLabels, fitReason } from './log-label.js';
import { showPath } from './enforce.js';
import { wellFormed } from '../common/well-formed.js';

/** Options for `DaemonLink`. */
export interface DaemonLinkOptions {
  server: string;
  /** `--socket PATH`; else the environment decides. */
  socket?: string | undefined;
  env?: Readonly<Record<string, string | undefined>>;
  /** How the link introduces itself (`rootsctl status` shows it). */
  clientInfo: { name: string; version: string };
  log?: ProxyLogger | undefined;
  /** First and longest wait between connection attempts (default 100 ms and 5 s). */
  backoffMs?: { min: number; max: number };
  /** Limit for connecting and for each answer (default 2 s). */
  timeoutMs?: number;
  /** `--allow-unknown-server`: a name the policy lacks was acknowledged (its warning says so). */
  allowUnknownServer?: boolean;
  /** How messages name rootsctl and mcp-rootsd (default: the bare names). */
  commands?: HintCommands;
  /** `--sandbox`: the server runs sandboxed whatever the policy says (`writers` are asked for). */
  sandboxed?: boolean;
}

/** What changed with a new list; `reconnected` on the first list of a new connection. */
export interface RootsChange {
  added: string[];
  removed: string[];
  reconnected: boolean;
}

/** Events of `DaemonLink`. */
export interface DaemonLinkEvents {
  roots: [roots: Root[], change: RootsChange];
  /** The policy's `launch` or `sandbox` for the server changed (its roots may not have). */
  rules: [];
  lost: [reason: string];
}

/** Room for `{"jsonrpc":"2.0","id":…,"method":"roots/check","params":…}` around the params. */
const CHECK_ENVELOPE_BYTES = 128;

const quiet: ProxyLogger = { error() {}, warn() {}, info() {}, debug() {} };

/** The daemon as one server's proxy sees it; `roots` is undefined while the policy is not known. */
export class DaemonLink extends EventEmitter<DaemonLinkEvents> {
  /** The server's current roots, or undefined while the daemon is unreachable. */
  roots: Root[] | undefined;
  /** The policy's `servers.<name>.tools` rules (from `policy/explain`, when the daemon gives them). */
  tools: Record<string, ToolRule> = {};
  /** The policy's `servers.<name>.launch` and `sandbox` (from `policy/explain`, when known). */
  launch: LaunchRule | undefined;
  sandbox: SandboxRule | undefined;
  /** The policy's `ask:` for the server (from `policy/explain`); never asking until known. */
  ask: AskRule = { outside: false, write: false };
  /**
   * For a sandboxed server: what the policy lets other servers write (`policy/explain`'s
   * `writers`); undefined until known, or from a daemon that does not give it.
   */
  writers: Writer[] | undefined;
  /** The server's denies and protected paths (`policy/explain`'s `deny`), for a sandbox. */
  deny: DenyMeta[] | undefined;
  /**
   * How the policy covers this server: undefined until the daemon has answered; a name nothing
   * or only `'*'` covers comes with the names the policy has (a typo in `--server` is likely).
   */
  named: ServerNaming | undefined;
  private revision = -1;
  private instance: string | undefined;
  private closed = false;
  private warnedNoEntry = false;
  /** Counts `policy/explain` requests: only the latest one's answer is applied. */
  private explained = 0;
  private readonly log: ProxyLogger;
  private readonly timeoutMs: number;
  private readonly reconnector: Reconnector;
  /** How the proxy's messages name rootsctl and mcp-rootsd. */
  readonly commands: HintCommands;

  constructor(private readonly options: DaemonLinkOptions) {
    super();
    let settle!: () => void;
    this.firstAttempt = new Promise((resolve) => (settle = resolve));
    this.settleFirst = settle;
    this.log = options.log ?? quiet;
    this.timeoutMs = options.timeoutMs ?? 2000;
    this.commands = options.commands ?? BARE_COMMANDS;
    this.reconnector = new Reconnector({
      connect: () =>
        RootsClient.connect({
          socket: options.socket,
          env: options.env ?? process.env,
          clientInfo: options.clientInfo,
          timeoutMs: this.timeoutMs,
          startHint: () => startHint(this.commands),
        }),
      backoffMs: options.backoffMs ?? { min: 100, max: 5000 },
    });
    this.reconnector.on('connected', (client) => void this.onConnected(client));
    this.reconnector.on('disconnected', (_client, reason) => this.onClose(reason));
    this.reconnector.on('retrying', (err, attempt, delay) => this.onRetry(err, attempt, delay));
  }

  private get client(): RootsClient | undefined {
    return this.reconnector.client;
  }

  /** The daemon's socket once connected (a sandbox hides it even inside a root). */
  socketPath: string | undefined;

  /** Settles after the first attempt to connect, whether it found the daemon or not. */
  readonly firstAttempt: Promise<void>;
  private readonly settleFirst: () => void;

  /** Whether the link is connected and knows the list. */
  get known(): boolean {
    return this.roots !== undefined;
  }

  /** Start connecting (and keep reconnecting until `close()`). */
  start(): this {
    this.reconnector.start();
    return this;
  }

  /** The roots once known, or undefined if they are not known within `ms`. */
  whenKnown(ms: number): Promise<Root[] | undefined> {
    if (this.roots !== undefined || this.closed) return Promise.resolve(this.roots);
    return new Promise((resolve) => {
      const onRoots = (roots: Root[]): void => {
        clearTimeout(timer);
        resolve(roots);
      };
      const timer = setTimeout(() => {
        this.off('roots', onRoots);
        resolve(undefined);
      }, ms);
      this.once('roots', onRoots);
    });
  }

  /**
   * `roots/check` for this link's server; throws `DAEMON_UNREACHABLE` while there is no daemon,
   * and `CallCancelled` as soon as `signal` aborts (the daemon's answer is then dropped).
   */
  async check(
    path: string,
    access: Access,
    context: { tool?: string; client?: string; record?: false } = {},
    signal?: AbortSignal,
  ): Promise<CheckResult> {
    const client = this.connected();
    const { record, ...labels } = context;
    const params = {
      server: this.options.server,
      path,
      access,
      ...fitLabels(labels),
      ...(record === false ? { record } : {}),
    };
    // mcp-rootsd closes a connection whose line passes its cap: one long path would cost every
    // other call of this server until the link is back. Refuse that one check instead.
    const bytes = Buffer.byteLength(JSON.stringify(params), 'utf8') + CHECK_ENVELOPE_BYTES;
    if (bytes > DEFAULT_MAX_LINE_BYTES) {
      throw new RootsError(
        'PATH_INVALID',
        `the path is too long to ask mcp-rootsd about: its roots/check would be ${bytes} bytes, over the daemon's ${DEFAULT_MAX_LINE_BYTES}-byte line cap`,
      );
    }
    return untilCancelled(
      client.request('roots/check', params, { timeoutMs: this.timeoutMs }),
      signal,
    );
  }

  /**
   * `grants/add` for this link's server: what a person's accepted answer grants, exactly the
   * canonical path they were shown (`asked`: the daemon refuses it if a link now leads elsewhere).
   */
  async grant(path: string, options: { seconds: number; readOnly: boolean }): Promise<Grant> {
    const answer = await this.connected().request(
      'grants/add',
      { server: this.options.server, path, ...options, asked: true },
      { timeoutMs: this.timeoutMs },
    );
    return answer.grant;
  }

  /** `log/ask` for this link's server; a daemon that cannot take it only costs the record. */
  async logAsk(params: Omit<ParamsOf<'log/ask'>, 'server'>): Promise<void> {
    try {
      await this.connected().request(
        'log/ask',
        { server: this.options.server, ...fitLabels(params) },
        { timeoutMs: this.timeoutMs },
      );
    } catch (err) {
      this.log.warn(`could not record the ask in the decision log: ${(err as Error).message}`);
    }
  }

  /**
   * `log/refused` for this link's server: a path refused here for its form. The value is shown
   * escaped and cut to what a path may be; a daemon that cannot take it only costs the record.
   */
  async logRefused(params: Omit<ParamsOf<'log/refused'>, 'server'>): Promise<void> {
    // Whole characters, and a lone surrogate (no file's name, which the daemon refuses) as U+FFFD.
    const shown = [...showPath(params.path)].slice(0, 1024).join('');
    const path = wellFormed(shown) || '(empty)';
    try {
      await this.connected().request(
        'log/refused',
        {
          server: this.options.server,
          ...fitLabels({ ...params, path, reason: fitReason(params.reason) }),
        },
        { timeoutMs: this.timeoutMs },
      );
    } catch (err) {
      this.log.debug(`could not record the refusal in the decision log: ${(err as Error).message}`);
    }
  }

  private connected(): RootsClient {
    const client = this.client;
    if (client === undefined || this.roots === undefined) {
      throw new RootsError(
        'DAEMON_UNREACHABLE',
        'mcp-rootsd is not reachable, so the policy is not known',
      );
    }
    return client;
  }

  /** Stop reconnecting and close the connection; the same promise every time. */
  close(): Promise<void> {
    this.closed = true;
    this.settleFirst();
    return this.reconnector.close();
  }

  /** A new connection: subscribe to the server's roots and learn its tool and launch rules. */
  private async onConnected(client: RootsClient): Promise<void> {
    this.socketPath = client.socketPath;
    client.on('list_changed', (params) => this.onListChanged(params));
    client.on('rules_changed', (params) => {
      if (params.server === this.options.server) void this.refreshTools(client);
    });
    try {
      // Subscribe first, then ask for the rules: a change after the subscription is pushed.
      const list = await client.listRoots(this.options.server, { subscribe: true });
      await this.refreshTools(client, true);
      this.log.info(`connected to mcp-rootsd on ${client.socketPath}`);
      this.reconnector.resetBackoff();
      this.apply(
        list.roots,
        list._meta['mcp-roots/revision'],
        list._meta['mcp-roots/instance'],
        true,
      );
    } catch (err) {
      this.log.warn(`mcp-rootsd did not answer roots/list: ${(err as Error).message}`);
      await client.close();
    }
    this.settleFirst();
  }

  private onRetry(err: unknown, attempt: number, delay: number): void {
    // The first attempt is over: whoever waits for it starts without the daemon.
    this.settleFirst();
    const message = err instanceof Error ? err.message : String(err);
    // The first failure is worth a warning; the retries that follow are not.
    // The message is whole sentences ("… or `mcp-rootsd`."): add one, do not splice into its last.
    if (attempt === 0) this.log.warn(`${message.replace(/\.?$/, '.')} Retrying.`);
    else this.log.debug(`still unreachable (${message}); next attempt in ${delay} ms`);
  }

  private async refreshTools(client: RootsClient, connecting = false): Promise<void> {
    const asked = ++this.explained;
    try {
      // A sandboxed server's start needs what other servers may write (launch-plan.ts); the
      // policy may ask for the sandbox only in this answer, and then it is asked again.
      const server = this.options.server;
      const sandboxed = this.options.sandboxed === true || this.sandbox !== undefined;
      let explained = await client.explain(server, { writers: sandboxed });
      if (!sandboxed && explained.sandbox !== undefined)
        explained = await client.explain(server, { writers: true });
      // Two answers can cross: an older one must not undo a newer one.
      if (asked !== this.explained) return;
      const rules = () => [
        this.launch,
        this.sandbox,
        this.tools,
        this.ask,
        this.writers,
        this.deny,
      ];
      const before = rules().map((x) => JSON.stringify(x));
      this.tools = explained.tools ?? {};
      this.launch = explained.launch;
      this.sandbox = explained.sandbox;
      this.ask = explained.ask ?? { outside: false, write: false };
      this.writers = explained.writers;
      this.deny = explained.deny;
      const after = rules().map((x) => JSON.stringify(x));
      const changed = ['launch', 'sandbox', 'tools', 'ask', 'writers', 'deny'].filter(
        (_, i) => before[i] !== after[i],
      );
      if (!connecting && changed.length > 0) {
        this.log.debug(
          `the policy's rules for ${this.options.server} changed: ${changed.join(', ')}`,
        );
        if (['launch', 'sandbox', 'writers'].some((r) => changed.includes(r))) this.emit('rules');
      }
      if (isDeclared(explained) && explained.coveredBy !== 'catch-all') {
        this.named = { kind: 'named' };
        return;
      }
      const named: ServerNaming = {
        kind: isDeclared(explained) ? 'catch-all' : 'unknown',
        policyServers: await policyServers(client, this.options.server),
      };
      this.named = named;
      // A name no entry matches is most likely a typo in --server: say so once, not at each reconnect.
      const warning = namingWarning(
        this.options.server,
        named,
        this.options.allowUnknownServer ?? false,
        this.commands,
      );
      if (connecting && !this.warnedNoEntry && warning !== undefined) {
        this.warnedNoEntry = true;
        this.log.warn(warning);
      }
    } catch (err) {
      this.log.debug(`policy/explain failed, no tool rules: ${(err as Error).message}`);
    }
  }

  private onListChanged(params: ListChangedParams): void {
    if (params.server !== this.options.server) return;
    const client = this.client;
    // The rules (tools, launch, sandbox) follow a moment later; if launch or sandbox differ by
    // then, 'rules' says so and the supervisor plans again.
    if (client !== undefined) void this.refreshTools(client);
    this.apply(params.roots, params.revision, params.instance, false);
  }

  /**
   * Which of the daemon's lists the roots are from (its instance and revision): another once
   * the policy, a grant or lockdown changed them, or the daemon went away.
   */
  get listMark(): string {
    return `${this.instance ?? ''}:${this.revision}`;
  }

  private apply(roots: Root[], revision: number, instance: string, reconnected: boolean): void {
    // An answer and a notification can cross; the older one must not win.
    if (instance === this.instance && revision < this.revision) return;
    const before = new Set((this.roots ?? []).map((r) => r.uri));
    const after = new Set(roots.map((r) => r.uri));
    this.instance = instance;
    this.revision = revision;
    this.roots = roots;
    const added = [...after].filter((u) => !before.has(u));
    const removed = [...before].filter((u) => !after.has(u));
    this.log.debug(
      `roots of ${this.options.server} (revision ${revision}): ${roots.length}, +${added.length} -${removed.length}`,
    );
    this.emit('roots', roots, { added, removed, reconnected });
  }

  private onClose(reason: string): void {
    const wasKnown = this.roots !== undefined;
    this.roots = undefined;
    this.named = undefined;
    this.revision = -1;
    if (this.closed) return;
    this.log.warn(`lost mcp-rootsd (${reason}); failing closed until it is back`);
    if (wasKnown) this.emit('lost', reason);
  }
}

/** Whether the policy names the server (a daemon that predates `declared`: some root entry does). */
function isDeclared(explained: ExplainResult): boolean {
  return explained.declared ?? explained.rules.some((r) => r.kind === 'root');
}

/**
 * The servers the policy names. `daemon/status` also lists names that are only subscribed to
 * (this proxy's own among them, and under `'*'` every one of them): keep those an entry names.
 */
async function policyServers(client: RootsClient, self: string): Promise<string[]> {
  const names = (await client.status()).servers.map((s) => s.name).filter((n) => n !== self);
  const explained = await Promise.all(names.map((n) => client.explain(n)));
  const named = (e: ExplainResult): boolean =>
    e.coveredBy === undefined ? isDeclared(e) : e.coveredBy === 'name';
  return names.filter((_, i) => named(explained[i]!)).sort();
}
