/**
 * What the host subscribed to, so that a restarted server (server-swap.ts) serves the same
 * subscriptions: in a 2025-era session the URIs of `resources/subscribe`, in a 2026-07-28 one the
 * open `subscriptions/listen` streams. A stream is the host's own long-lived request: the new
 * server gets it again under the same id, and its acknowledgement stays with the proxy (the host
 * has had one).
 */
import { memberText, removeMember, setMember } from '../protocol/json-text.js';
import { idKey } from '../protocol/messages.js';
import { isObject, type McpLine } from './mcp-line.js';

/** The `_meta` key naming the stream a 2026-07-28 notification belongs to. */
export const SUBSCRIPTION_ID_KEY = 'io.modelcontextprotocol/subscriptionId';

/** One open `subscriptions/listen` stream of the host's. */
export interface ListenStream {
  /** The request's id exactly as the host wrote it (JSON text). */
  idText: string;
  /** The id as a value, for the `subscriptionId` of notifications on the stream. */
  id: string | number;
  /** The host's request line, to send a new server as it was. */
  text: string;
  /** What the host asked to hear of (`toolsListChanged`, `resourceSubscriptions`, ...). */
  filter: Record<string, unknown>;
}

/** The list each `<list>ListChanged` filter member stands for. */
const FILTER_OF_LIST: Record<string, string> = {
  tools: 'toolsListChanged',
  prompts: 'promptsListChanged',
  resources: 'resourcesListChanged',
};

export class HostSubscriptions {
  private readonly uris = new Set<string>();
  private readonly streams = new Map<string, ListenStream>();
  /** Streams sent again to a new server, whose acknowledgement the host must not see twice. */
  private readonly replayed = new Set<string>();

  /** A host request or notification on its way to the server. */
  onHost(line: McpLine): void {
    const { method, params } = line;
    if (method === 'resources/subscribe' || method === 'resources/unsubscribe') {
      if (typeof params.uri !== 'string') return;
      if (method === 'resources/subscribe') this.uris.add(params.uri);
      else this.uris.delete(params.uri);
    } else if (method === 'subscriptions/listen' && line.isRequest) {
      const key = line.idKey;
      const id = line.msg?.id;
      if (key === undefined || (typeof id !== 'string' && typeof id !== 'number')) return;
      const filter = isObject(params.notifications) ? params.notifications : {};
      this.streams.set(key, { idText: line.idText!, id, text: replayText(line.text), filter });
    } else if (method === 'notifications/cancelled') {
      const key = line.cancelledKey;
      if (key !== undefined) this.ended(key);
    }
  }

  /** A stream ended: the server answered the listen request, or the host cancelled it. */
  ended(key: string): void {
    this.streams.delete(key);
    this.replayed.delete(key);
  }

  /** A subscription no longer restored (the policy refuses it now). */
  forget(uri: string): void {
    this.uris.delete(uri);
  }

  /** URIs of the host's 2025-era resource subscriptions. */
  resourceUris(): string[] {
    return [...this.uris];
  }

  /** The open 2026-07-28 streams. */
  listenStreams(): ListenStream[] {
    return [...this.streams.values()];
  }

  /** The streams whose filter asks to hear that `list` (tools, prompts, resources) changed. */
  streamsFor(list: string): ListenStream[] {
    const member = FILTER_OF_LIST[list];
    return this.listenStreams().filter((s) => member !== undefined && s.filter[member] === true);
  }

  /** `stream` is being sent to a new server: swallow the acknowledgement it will send. */
  replaying(stream: ListenStream): void {
    const key = idKey(stream.idText);
    if (key !== undefined) this.replayed.add(key);
  }

  /** Whether a server's notification is the acknowledgement of a replayed stream (then dropped). */
  consumeAck(line: McpLine): boolean {
    if (line.method !== 'notifications/subscriptions/acknowledged') return false;
    const meta = line.params._meta;
    const id = isObject(meta) ? meta[SUBSCRIPTION_ID_KEY] : undefined;
    if (typeof id !== 'string' && typeof id !== 'number') return false;
    const key = idKey(JSON.stringify(id));
    if (key === undefined || !this.replayed.has(key)) return false;
    this.replayed.delete(key);
    return true;
  }
}

/**
 * A stream's request as a restarted server gets it: without the host's answers to the old
 * server's input requests, nor that server's `requestState` (the spec forbids a stale one). The
 * host's line was relayed with its roots answers replaced (input-required.ts), but the replay
 * is the proxy's, and carried the host's own roots to the new server (an attacker pass).
 */
function replayText(text: string): string {
  const params = memberText(text, 'params');
  if (params === undefined || !params.startsWith('{')) return text;
  const clean = removeMember(removeMember(params, 'inputResponses'), 'requestState');
  return clean === params ? text : setMember(text, 'params', clean);
}
