/**
 * Every line the host writes, up to its admission: cut from the host's output, read once, batches
 * taken apart, lines the proxy cannot read refused, and answers to requests (the server's, the
 * proxy's own asks) sent where they belong at once. What is left is admitted in arrival order.
 */
import { errorLine } from '../protocol/messages.js';
import { RpcCode } from '../protocol/rpc-errors.js';
import { batchElements, looksLikeBatch, splitHostBatch } from './batch.js';
import { LineSplitter } from './line-splitter.js';
import type { ProxyLogger } from './log.js';
import { McpLine } from './mcp-line.js';
import type { OpenIds } from './open-ids.js';
import { RESERVED_ID_MESSAGE, reservedId, type OwnRequests } from './own-requests.js';

/** The parts a host line may go to, and the callbacks it is sent on with. */
export interface HostLinesParts {
  log: ProxyLogger;
  toServer: (data: Buffer | string) => void;
  toHost: (data: Buffer | string) => void;
  /** The proxy's own requests to the host (the asks). */
  hostOwn: OwnRequests;
  /** Requests the server sent the host: the only ones a host answer may go back to. */
  serverAsked: OpenIds;
  /** The host's request `key` was answered inside a refused batch. */
  answeredInBatch: (key: string | undefined) => void;
  /** A request or notification, admitted after the host's earlier ones (in-order.ts). */
  admit: (line: McpLine) => void;
}

export class HostLines {
  private readonly splitter = new LineSplitter();

  constructor(private readonly parts: HostLinesParts) {}

  /** Bytes the host wrote. */
  push(chunk: Buffer): void {
    for (const bytes of this.splitter.push(chunk)) this.onLine(bytes);
  }

  /** The host closed its output: its unterminated last line, if any, counts too. */
  end(): void {
    const rest = this.splitter.end();
    if (rest !== undefined) this.onLine(rest);
  }

  private onLine(bytes: Buffer): void {
    if (looksLikeBatch(bytes)) return this.onBatch(bytes);
    this.onMessage(new McpLine(bytes));
  }

  /** A batch never reaches the server as one line: its requests are refused, the rest go alone. */
  private onBatch(bytes: Buffer): void {
    const elements = batchElements(bytes.toString('utf8'));
    if (elements === undefined) {
      // Not JSON: a server's lenient parser must not get to read it either.
      const message = 'mcp-roots-proxy: a line that starts like a JSON-RPC batch is not valid JSON';
      this.parts.toHost(errorLine('null', { code: RpcCode.PARSE_ERROR, message }));
      return;
    }
    const { alone, refusal, refusedKeys } = splitHostBatch(elements);
    // Only request ids: a response's id is the server's, a different namespace.
    for (const key of refusedKeys) this.parts.answeredInBatch(key);
    if (refusal !== undefined) this.parts.toHost(refusal);
    for (const line of alone) this.onMessage(line);
  }

  private onMessage(line: McpLine): void {
    const { log, toServer, toHost, hostOwn, serverAsked } = this.parts;
    // Answers to the server's requests never wait behind a held call.
    if (line.isResponse) {
      // The host's answer to an ask of the proxy's own is the proxy's, never the server's.
      if (line.msg !== undefined && hostOwn.isOwn(line.msg)) hostOwn.settle(line.msg);
      // Only an answer to a request the server sent the host reaches the server: anything else
      // (a `roots/list` answer of the host's own making, say) would stand in for the proxy's.
      else if (serverAsked.take(line.idKey)) toServer(line.bytes);
      else
        log.warn(
          `dropped the host's answer to id ${line.idText ?? 'null'}: the server has no request open under it`,
        );
      return;
    }
    if (line.msg === undefined || line.method === undefined) {
      // What the proxy cannot read it cannot check: a parser laxer than JSON.parse (NaN, a
      // trailing comma) might still read a call in it. Never passed on.
      const message = `mcp-roots-proxy: the line is not a JSON-RPC request or notification (${line.msg === undefined ? 'not JSON' : 'no method'}); it was not passed to the server`;
      log.warn(message);
      const code = line.msg === undefined ? RpcCode.PARSE_ERROR : RpcCode.INVALID_REQUEST;
      toHost(errorLine(line.idText ?? 'null', { code, message }));
      return;
    }
    if (line.isRequest && reservedId(line.idKey)) {
      toHost(
        errorLine(line.idText!, { code: RpcCode.INVALID_REQUEST, message: RESERVED_ID_MESSAGE }),
      );
      return;
    }
    this.parts.admit(line);
  }
}
