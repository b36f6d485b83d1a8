/**
 * Every line the MCP server writes: cut from its output, read once, and given to the part it
 * belongs to (its `roots/list` to the roots, answers to the proxy's own requests to those,
 * everything else on to the host). Nothing that is not a JSON-RPC message reaches the host.
 */
import { errorLine, type JsonObject } from '../protocol/messages.js';
import { RpcCode } from '../protocol/rpc-errors.js';
import { batchElements, looksLikeBatch } from './batch.js';
import type { HostSubscriptions } from './host-subscriptions.js';
import type { InputRequired } from './input-required.js';
import { LineSplitter } from './line-splitter.js';
import type { ProxyLogger } from './log.js';
import { McpLine } from './mcp-line.js';
import type { OpenIds } from './open-ids.js';
import { unreadableServerLine } from './unreadable-line.js';
import { RESERVED_ID_MESSAGE, reservedId, type OwnRequests } from './own-requests.js';
import type { RelayedRequests } from './relayed.js';
import type { ServerRoots } from './server-roots.js';

/** The parts a server line may go to, and the callbacks it is sent on with. */
export interface ServerLinesParts {
  log: ProxyLogger;
  toServer: (data: Buffer | string) => void;
  toHost: (data: Buffer | string) => void;
  /** The proxy's own requests to the server (its `tools/list`, its pings). */
  own: OwnRequests;
  /** 2026-07-28 retries of host requests, under ids of the proxy's own. */
  inputs: InputRequired;
  /** Host requests the server has not answered yet. */
  relayed: RelayedRequests;
  /** What the host subscribed to; a restarted server's acknowledgements of it. */
  subscriptions: HostSubscriptions;
  /** The server's `roots/list` and the cancellations of it. */
  roots: ServerRoots;
  /** Requests the server sent the host: the only ones a host answer may go back to. */
  serverAsked: OpenIds;
  /** The server said `notifications/tools/list_changed`. */
  toolsChanged: () => void;
  /** The server's answer to a host request, its own bookkeeping done: for the host. */
  answered: (line: McpLine, msg: JsonObject) => void;
}

export class ServerLines {
  private splitter = new LineSplitter();

  constructor(private readonly parts: ServerLinesParts) {}

  /** A new server's output starts: nothing of the old one's last line is carried over. */
  restart(): void {
    this.splitter = new LineSplitter();
  }

  /** Bytes the server wrote. */
  push(chunk: Buffer): void {
    for (const bytes of this.splitter.push(chunk)) this.onLine(bytes);
  }

  /** The server closed its output: its unterminated last line, if any, counts too. */
  end(): void {
    const rest = this.splitter.end();
    if (rest !== undefined) this.onLine(rest);
  }

  private onLine(bytes: Buffer, inBatch = false): void {
    if (bytes.length === 0 || (bytes.length === 1 && bytes[0] === 0x0d)) return;
    if (looksLikeBatch(bytes)) return this.onBatch(bytes, inBatch);
    const { log, toServer, toHost, roots, subscriptions } = this.parts;
    const line = new McpLine(bytes);
    const { msg, method } = line;
    if (msg === undefined) {
      log.warn(
        `dropped a line from the server that is not a JSON-RPC message: ${line.text.slice(0, 200)}`,
      );
      return;
    }
    if (line.isResponse) return this.onResponse(line, msg);
    if (method === undefined) {
      // The host's stdout carries only MCP frames: a JSON object that is none is garbage too.
      log.warn(
        `dropped a JSON line from the server that is not a JSON-RPC message: ${line.text.slice(0, 200)}`,
      );
      return;
    }
    const unreadable = unreadableServerLine(line);
    if (unreadable !== undefined) {
      // A host's reader might take it for another message (an id in the proxy's namespace).
      const message = `mcp-roots-proxy: ${unreadable}`;
      log.warn(`refused the server's ${method}: ${message}`);
      if (line.isRequest) {
        toServer(errorLine(line.idText!, { code: RpcCode.INVALID_REQUEST, message }));
      }
      return;
    }
    if (line.isRequest && reservedId(line.idKey)) {
      // The host's answer would be taken for one to the proxy's own question to the person.
      log.warn(`refused the server's ${method}: ${RESERVED_ID_MESSAGE}`);
      toServer(
        errorLine(line.idText!, { code: RpcCode.INVALID_REQUEST, message: RESERVED_ID_MESSAGE }),
      );
      return;
    }
    // An id the server uses again is no longer the open request the host may answer.
    if (line.isRequest) this.parts.serverAsked.take(line.idKey);
    if (method === 'roots/list' && line.isRequest) return roots.onRootsList(line);
    if (method === 'notifications/cancelled' && this.cancelled(line)) return;
    // A restarted server acknowledges the host's stream again; the host has had its answer.
    if (subscriptions.consumeAck(line)) return;
    if (method === 'notifications/tools/list_changed') this.parts.toolsChanged();
    if (line.isRequest) this.parts.serverAsked.add(line.idKey);
    toHost(line.bytes);
  }

  /** A server's cancellation: true when it goes no further than the proxy. */
  private cancelled(line: McpLine): boolean {
    const key = line.cancelledKey;
    this.parts.serverAsked.take(key);
    // The proxy's question to the host is the proxy's to withdraw.
    return reservedId(key) || this.parts.roots.consumeCancel(key);
  }

  /** Each element of a server's batch is handled as if it had come alone; nothing else passes. */
  private onBatch(bytes: Buffer, inBatch: boolean): void {
    const elements = inBatch ? undefined : batchElements(bytes.toString('utf8'));
    if (elements === undefined) {
      this.parts.log.warn(
        `dropped a line from the server that is not a JSON-RPC message: ${bytes.toString('utf8').slice(0, 200)}`,
      );
      return;
    }
    for (const element of elements) this.onLine(Buffer.from(element, 'utf8'), true);
  }

  private onResponse(line: McpLine, msg: JsonObject): void {
    const { own, inputs, relayed, subscriptions } = this.parts;
    // First: the proxy's retries of a host request carry ids of the proxy's own.
    if (inputs.onAnswer(line)) return;
    if (own.isOwn(msg)) return own.settle(msg);
    const key = line.idKey;
    if (key !== undefined) {
      relayed.settled(key);
      subscriptions.ended(key);
    }
    this.parts.answered(line, msg);
  }
}
