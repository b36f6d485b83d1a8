/** Host requests relayed to the server and not yet answered, so that none is left waiting when the server dies. */
import { errorLine, idKey } from '../protocol/messages.js';
import { RpcCode } from '../protocol/rpc-errors.js';
import type { ProxyLogger } from './log.js';

/** Why a request got no answer from the server. */
export const SERVER_GONE = 'the MCP server exited or closed its output (see the proxy’s stderr)';

/** The host's requests on their way to or at the server, by id key. */
export class RelayedRequests {
  private readonly waiting = new Map<string, { idText: string; method: string }>();

  /** Remember a request sent to the server (one with a null id cannot be answered and is not). */
  track(idText: string | undefined, method: string): void {
    const key = idKey(idText);
    if (idText !== undefined && key !== undefined) this.waiting.set(key, { idText, method });
  }

  /** The server answered request `key`, or the host cancelled it. */
  settled(key: string): void {
    this.waiting.delete(key);
  }

  /** The server is gone: answer every request still waiting with an error, through `toHost`. */
  failAll(toHost: (line: string) => void, log: ProxyLogger): void {
    for (const { idText, method } of this.waiting.values()) {
      log.warn(`the server went away before answering ${method}; answered with an error`);
      toHost(
        errorLine(idText, {
          code: RpcCode.INTERNAL_ERROR,
          message: `mcp-roots-proxy: no answer to ${method}: ${SERVER_GONE}`,
        }),
      );
    }
    this.waiting.clear();
  }
}
