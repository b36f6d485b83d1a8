/** The server's tools as the proxy learns them (`tools/list`, again on `list_changed`), and which arguments of a call are paths. */
import type { Access, ToolRule } from '../common/types.js';
import type { JsonObject } from '../protocol/messages.js';
import { pathValues, type ArgumentRefusal, type PathValue } from './arguments.js';
import type { ProxyLogger } from './log.js';
import { isObject } from './mcp-line.js';
import { ToolTable, type ToolInfo } from './tool-table.js';

/** Pages of `tools/list` read at most: a server that never stops paging cannot keep the proxy busy for ever. */
const MAX_PAGES = 1000;

/** What the catalogue needs from the rest of the proxy. */
export interface ToolCatalogOptions {
  /** Send the proxy's own request to the server and await its result. */
  request: (method: string, params: JsonObject) => Promise<unknown>;
  /** The policy's `tools:` rule for a tool, if any. */
  ruleFor: (name: string) => ToolRule | undefined;
  /** How long a call waits for the first list before it is checked with what is known. */
  waitMs: number;
  log: ProxyLogger;
}

/** The path arguments of one tool call, and the access they need. */
export interface CallPaths {
  /** Each path value (and whether its place takes URIs), or why the call is refused unchecked. */
  values: PathValue[] | ArgumentRefusal;
  access: Access;
  /** Whether the server's last list named the tool (only a listed tool's refusal is asked about). */
  listed: boolean;
}

/** Resolves with the promise's value, or with undefined once `ms` have passed. */
function settledWithin<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** What the proxy knows of the server's tools. */
export class ToolCatalog {
  private tools: ToolTable | undefined;
  private ready: Promise<void> | undefined;
  private refreshing = false;
  private stale = false;
  /** Tools called but not listed since the last list: each asks for one more list, not more. */
  private readonly unlistedAsked = new Set<string>();

  constructor(private readonly options: ToolCatalogOptions) {}

  /** Whether the proxy has asked for the list at least once. */
  get started(): boolean {
    return this.ready !== undefined;
  }

  /** Fetch every page of `tools/list`; a refresh asked for during one runs once more after it. */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.stale = true;
      return this.ready ?? Promise.resolve();
    }
    this.refreshing = true;
    this.ready = (async () => {
      do {
        this.stale = false;
        await this.fetchAll();
      } while (this.stale);
      this.refreshing = false;
    })();
    return this.ready;
  }

  /** What a call of tool `name` with `args` reads or writes. */
  async callPaths(name: string, args: JsonObject): Promise<CallPaths> {
    const info = await this.info(name);
    return {
      values: pathValues(args, info.inputSchema, info.declaredPaths),
      access: info.readOnly ? 'read' : 'write',
      listed: this.tools?.has(name) ?? false,
    };
  }

  private async info(name: string): Promise<ToolInfo> {
    if (this.tools === undefined && this.ready !== undefined) {
      await settledWithin(this.ready, this.options.waitMs);
    }
    if (this.tools !== undefined && !this.tools.has(name) && !this.unlistedAsked.has(name)) {
      // A tool the last list did not name: the list may be stale (a server whose change notice
      // the proxy cannot hear, as in a 2026-07-28 session without a subscription). Ask again once.
      if (this.unlistedAsked.size >= MAX_PAGES) this.unlistedAsked.clear();
      this.unlistedAsked.add(name);
      await settledWithin(this.refresh(), this.options.waitMs);
    }
    return (this.tools ?? new ToolTable()).get(name, this.options.ruleFor(name));
  }

  private async fetchAll(): Promise<void> {
    const { request, log } = this.options;
    try {
      const all: unknown[] = [];
      let cursor: string | undefined;
      for (let page = 0; page < MAX_PAGES; page++) {
        const result = await request('tools/list', cursor === undefined ? {} : { cursor });
        if (!isObject(result)) break;
        if (Array.isArray(result.tools)) all.push(...(result.tools as unknown[]));
        cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
        if (cursor === undefined) break;
      }
      this.tools = new ToolTable(all);
      log.debug(`learnt ${this.tools.size} tools`);
    } catch (err) {
      log.warn(`could not list the server's tools: ${(err as Error).message}`);
    }
  }
}
