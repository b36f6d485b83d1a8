/** The requests the proxy itself sends the server (its `tools/list`), and pairing their answers. */
import { RootsError } from '../common/errors.js';
import { isObject } from '../common/is-object.js';
import { idText, notificationLine, requestLine, type JsonObject } from '../protocol/messages.js';
import { PendingRequests } from '../protocol/pending.js';

/** The prefix of the proxy's own request ids: the host's ids cannot collide with these. */
export const OWN_ID_PREFIX = 'mcp-roots-proxy:';

/** What a peer is told when a request of its own uses an id in the proxy's namespace. */
export const RESERVED_ID_MESSAGE = `mcp-roots-proxy: request ids that start with "${OWN_ID_PREFIX}" are the proxy's own; use another id`;

/** Whether an id (by its key, `idKey`) is in the namespace of the proxy's own requests. */
export function reservedId(key: string | undefined): boolean {
  return key?.startsWith(`s:${OWN_ID_PREFIX}`) === true;
}

/** Sends the proxy's own requests through `send` and settles them from the server's answers. */
export class OwnRequests {
  private nextId = 1;
  private readonly pending = new PendingRequests<string>();

  constructor(
    private readonly send: (line: string) => void,
    private readonly timeoutMs: number,
    /** Requests to the host (asks) use `OWN_ID_PREFIX` + `ask:`, to the server `OWN_ID_PREFIX`. */
    private readonly prefix: string = OWN_ID_PREFIX,
  ) {}

  /** Ask the server `method`; rejects on an error answer, after the time limit, or when it goes away. */
  request(method: string, params: JsonObject): Promise<unknown> {
    const id = `${this.prefix}${this.nextId++}`;
    const answer = this.pending.wait(id, method, this.timeoutMs);
    this.send(requestLine(idText(id), method, JSON.stringify(params)));
    return answer.catch((err: unknown) => {
      // Given up on: the peer may stop (a host closes the question's dialog).
      if (err instanceof RootsError && err.code === 'TIMEOUT') {
        const reason = `mcp-roots-proxy: no answer within ${this.timeoutMs} ms`;
        this.send(
          notificationLine('notifications/cancelled', JSON.stringify({ requestId: id, reason })),
        );
      }
      throw err;
    });
  }

  /** Whether an answer is to one of the proxy's own requests (answered or not: never for the host). */
  isOwn(msg: JsonObject): boolean {
    return typeof msg.id === 'string' && msg.id.startsWith(this.prefix);
  }

  /** Settle the request an answer of ours pairs with; false for a late or unknown one (dropped). */
  settle(msg: JsonObject): boolean {
    const awaited = this.pending.take(msg.id as string);
    if (awaited === undefined) return false;
    if ('error' in msg) awaited.reject(new Error(errorText(msg.error)));
    else awaited.resolve(msg.result);
    return true;
  }

  /** The server closed its output: nothing it was asked will be answered. */
  failAll(why = 'the server closed its output'): void {
    this.pending.rejectAll(() => new Error(why));
  }
}

/**
 * A JSON-RPC error as a log line reads it: `error -32603: "Internal error"`, the server's words
 * quoted (they are the server's, not the proxy's); any other shape as its JSON.
 */
function errorText(error: unknown): string {
  if (!isObject(error) || typeof error.message !== 'string') return JSON.stringify(error);
  const code = typeof error.code === 'number' ? ` ${error.code}` : '';
  return `the server answered error${code}: ${JSON.stringify(error.message)}`;
}
