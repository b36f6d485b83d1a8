/**
 * Every line the host writes, up to its admission: cut from the host's output, read once, batches
 * taken apart, lines the proxy cannot read refused, and answers to requests (the server's, the
 * proxy's own asks) sent where they belong at once. What is left is admitted in arrival order.
 */
import { isUtf8 } from 'node:buffer';
import { errorLine, idKey } from '../protocol/messages.js';
import { RpcCode } from '../protocol/rpc-errors.js';
import { batchElements, looksLikeBatch, splitHostBatch } from './batch.js';
import { lineEnds } from './line-head.js';
import {
  HOST_LINE_CAP,
  isOverlong,
  LineSplitter,
  type OverlongLine,
  type SplitLine,
} from './line-splitter.js';
import type { ProxyLogger } from './log.js';
import { McpLine } from './mcp-line.js';
import type { OpenIds } from './open-ids.js';
import { unreadableHostLine } from './unreadable-line.js';
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
  /** The host's request `key` was answered by the proxy before admission (in a batch, over the cap). */
  answeredInBatch: (key: string | undefined) => void;
  /** A request or notification, admitted after the host's earlier ones (in-order.ts). */
  admit: (line: McpLine) => void;
}

export class HostLines {
  private readonly splitter = new LineSplitter(HOST_LINE_CAP);

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

  private onLine(line: SplitLine): void {
    if (isOverlong(line)) return this.onOverlong(line);
    const bytes = line;
    if (looksLikeBatch(bytes)) return this.onBatch(bytes);
    this.onMessage(new McpLine(bytes));
  }

  /** A batch never reaches the server as one line: its requests are refused, the rest go alone. */
  private onBatch(bytes: Buffer): void {
    if (!isUtf8(bytes)) {
      // Its elements would be handed on decoded: the bytes replaced, not the bytes sent.
      const message = 'mcp-roots-proxy: the line was not passed to the server: it is not UTF-8';
      this.parts.log.warn(`refused a batch from the host: it is not UTF-8`);
      this.parts.toHost(errorLine('null', { code: RpcCode.PARSE_ERROR, message }));
      return;
    }
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

  /**
   * A line over the cap: the server never gets any of it. An answer to a request of the server's
   * becomes an error answer to it; anything else is refused under its id (null when the line's
   * start does not hold it).
   */
  private onOverlong({ head, tail, bytes }: OverlongLine): void {
    const { log, toServer, toHost, hostOwn, serverAsked } = this.parts;
    const { idText, method, answer } = lineEnds(head, tail);
    const what = `a line of ${bytes} bytes from the host is over the ${HOST_LINE_CAP} byte cap`;
    log.warn(`${what}: ${head.toString('utf8', 0, 200)}`);
    if (answer && method === undefined) {
      const message = `mcp-roots-proxy: the host's answer was not passed on: ${what}`;
      const error = { code: RpcCode.INTERNAL_ERROR, message };
      const id: unknown = idText === undefined ? undefined : JSON.parse(idText);
      // The person's answer to the proxy's own question: an error, not a wait for the time limit.
      if (id !== undefined && hostOwn.isOwn({ id })) hostOwn.settle({ id, error });
      else if (serverAsked.take(idKey(idText))) toServer(errorLine(idText!, error));
      return;
    }
    // A request, or what may be one (its id may come after the head): answered, under a null id
    // when the head does not hold it, as JSON-RPC answers a request whose id cannot be read.
    const message = `mcp-roots-proxy: the line was not passed to the server: ${what} (the TypeScript MCP SDK reads no longer line); send less in one message`;
    if (idText !== undefined) this.parts.answeredInBatch(idKey(idText));
    toHost(errorLine(idText ?? 'null', { code: RpcCode.INVALID_REQUEST, message }));
  }

  private onMessage(line: McpLine): void {
    const { log, toServer, toHost, hostOwn, serverAsked } = this.parts;
    // A line another JSON reader could read as another message, or none at all, is never passed on.
    const unreadable = unreadableHostLine(line);
    if (unreadable !== undefined) {
      log.warn(unreadable.message);
      toHost(errorLine(line.idText ?? 'null', unreadable));
      return;
    }
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
    if (line.isRequest && reservedId(line.idKey)) {
      toHost(
        errorLine(line.idText!, { code: RpcCode.INVALID_REQUEST, message: RESERVED_ID_MESSAGE }),
      );
      return;
    }
    this.parts.admit(line);
  }
}
