/** One line of MCP traffic as the proxy relays it: its bytes, its text, and what parsing found. */
import { isObject } from '../common/is-object.js';
import { memberText } from '../protocol/json-text.js';
import { idKey, isRequest, isResponse, type JsonObject } from '../protocol/messages.js';

/** A line the proxy reads from the host or the server, parsed once. */
export class McpLine {
  readonly text: string;
  /** The parsed object, or undefined for a line that is not a JSON object. */
  readonly msg: JsonObject | undefined;
  private idRead = false;
  private idTextCache: string | undefined;
  private keyRead = false;
  private idKeyCache: string | undefined;

  constructor(readonly bytes: Buffer) {
    this.text = bytes.toString('utf8');
    let msg: JsonObject | undefined;
    try {
      const value: unknown = JSON.parse(this.text);
      if (isObject(value)) msg = value;
    } catch {
      msg = undefined;
    }
    this.msg = msg;
  }

  /** The method of a request or notification. */
  get method(): string | undefined {
    return typeof this.msg?.method === 'string' ? this.msg.method : undefined;
  }

  /** The params when they are an object, else an empty one. */
  get params(): JsonObject {
    return isObject(this.msg?.params) ? this.msg.params : {};
  }

  get isRequest(): boolean {
    return this.msg !== undefined && isRequest(this.msg);
  }

  get isResponse(): boolean {
    return this.msg !== undefined && isResponse(this.msg);
  }

  /** The id exactly as written (ids above 2^53 survive), or undefined when there is none. */
  get idText(): string | undefined {
    if (!this.idRead) {
      // Read once, on demand: a large result is scanned only when its id is needed.
      this.idTextCache =
        this.msg !== undefined && 'id' in this.msg ? memberText(this.text, 'id') : undefined;
      this.idRead = true;
    }
    return this.idTextCache;
  }

  /**
   * The id as the proxy compares it (`idKey`); undefined for none and for null. Kept once read:
   * one relayed call asks for it several times (admission, pending, relay, answer).
   */
  get idKey(): string | undefined {
    if (!this.keyRead) {
      this.idKeyCache = idKey(this.idText);
      this.keyRead = true;
    }
    return this.idKeyCache;
  }

  /** The key of the request a `notifications/cancelled` names. */
  get cancelledKey(): string | undefined {
    return idKey(memberText(memberText(this.text, 'params') ?? '{}', 'requestId'));
  }

  /** The key of the progress token in `params._meta`, if any. */
  get progressTokenKey(): string | undefined {
    const meta = this.params._meta;
    const token = isObject(meta) ? meta.progressToken : undefined;
    if (typeof token === 'string') return `s:${token}`;
    if (typeof token === 'number') return `n:${token}`;
    return undefined;
  }
}

// The proxy's parts take the one object test from here, beside the line type they read it on.
export { isObject };
