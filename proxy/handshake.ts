/**
 * The MCP handshake as the proxy sees it: what the host's `initialize` says (its capabilities,
 * its name, the revision), what the server's answer says (its capabilities), and whether the host
 * has said `notifications/initialized`. A restarted server is given the same `initialize` again.
 */
import { memberText } from '../protocol/json-text.js';
import type { JsonObject } from '../protocol/messages.js';
import { formElicitation, type AskPerson } from './ask-person.js';
import type { SessionEra } from './era.js';
import { isObject, type McpLine } from './mcp-line.js';
import type { RelayedRequests } from './relayed.js';
import { withRootsCapability, type ServerRoots } from './server-roots.js';
import type { SessionHealth } from './session-health.js';

/** The parts the handshake tells what it learns, and the callbacks it sends with. */
export interface HandshakeParts {
  asker: AskPerson;
  era: SessionEra;
  roots: ServerRoots;
  relayed: RelayedRequests;
  session: SessionHealth;
  toServer: (data: Buffer | string) => void;
  toHost: (data: Buffer | string) => void;
}

export class Handshake {
  /** Whether the host has said `notifications/initialized`. */
  initialized = false;
  /** The server's capabilities, from its answer to `initialize`. */
  serverCaps: JsonObject = {};
  /** Whether the server has tools; assumed until its answer says otherwise. */
  serverHasTools = true;
  /** The id key of the host's `initialize`; undefined in a 2026-07-28 session, which has none. */
  private initializeKey: string | undefined;
  /** The host's `initialize` params as sent to the server, for a restarted server's handshake. */
  private paramsText: string | undefined;

  constructor(private readonly parts: HandshakeParts) {}

  /** The host's `initialize`: note what it says, and send it on announcing the roots capability. */
  onInitialize(line: McpLine): void {
    const { asker, era, roots, relayed } = this.parts;
    this.initializeKey = line.idKey;
    const caps = line.params.capabilities;
    asker.hostElicits = isObject(caps) && formElicitation(caps.elicitation);
    const info = line.params.clientInfo;
    if (isObject(info) && typeof info.name === 'string') asker.client = info.name.slice(0, 200);
    era.noteInitialize();
    const version = line.params.protocolVersion;
    if (typeof version === 'string') roots.protocolVersion = version;
    relayed.track(line.idText, 'initialize');
    const text = withRootsCapability(line.text);
    this.paramsText = memberText(text, 'params');
    this.parts.toServer(text);
  }

  /** The host said `notifications/initialized`; true the first time only. */
  noteInitialized(): boolean {
    if (this.initialized) return false;
    this.initialized = true;
    return true;
  }

  /** If `line` answers the host's `initialize`, take what it says and send it on; else false. */
  answered(line: McpLine, msg: JsonObject): boolean {
    const key = line.idKey;
    if (key === undefined || key !== this.initializeKey) return false;
    this.onResult(msg.result);
    const { session, toHost } = this.parts;
    const text = session.initializeResult(line.text);
    toHost(text === line.text ? line.bytes : text);
    session.opened();
    return true;
  }

  /** A server's `initialize` result (the first server's, or a restarted one's). */
  onResult(result: unknown): void {
    if (!isObject(result)) return;
    if (typeof result.protocolVersion === 'string') {
      this.parts.roots.protocolVersion = result.protocolVersion;
    }
    const caps = isObject(result.capabilities) ? result.capabilities : {};
    this.serverCaps = caps;
    this.serverHasTools = caps.tools !== undefined;
  }

  /** The host's `initialize` params as the server got them, if the host sent one. */
  initializeParams(): JsonObject | undefined {
    return this.paramsText === undefined ? undefined : (JSON.parse(this.paramsText) as JsonObject);
  }
}
