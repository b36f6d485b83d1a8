/**
 * Every line the MCP server writes: cut from its output, read once, and given to the part it
 * belongs to (its `roots/list` to the roots, answers to the proxy's own requests to those,
 * everything else on to the host). Nothing that is not a JSON-RPC message reaches the host.
 */
import { isUtf8 } from 'node:buffer';
import { errorLine, type JsonObject } from '../protocol/messages.js';
import { RpcCode } from '../protocol/rpc-errors.js';
import { batchElements, looksLikeBatch } from './batch.js';
import type { HostSubscriptions } from './host-subscriptions.js';
import type { InputRequired } from './input-required.js';
import { lineEnds } from './line-head.js';
import {
  isOverlong,
  LineSplitter,
  SERVER_LINE_CAP,
  type OverlongLine,
  type SplitLine,
} from './line-splitter.js';
import type { ProxyLogger } from './log.js';
import { isObject, McpLine } from './mcp-line.js';
import type { OpenIds } from './open-ids.js';
import { unreadableServerLine } from './unreadable-line.js';
import { RESERVED_ID_MESSAGE, reservedId, type OwnRequests } from './own-requests.js';
import { askRefusal, inputRequestsRefusal } from './server-asks.js';
import type { RelayedRequests } from './relayed.js';
import type { ServerRoots } from './server-roots.js';
import { UpdateBacklog } from './update-backlog.js';

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
  /**
   * Why the host may not hear that the resource at `uri` changed (a `file:` URI the policy does not
   * let the server read), or undefined when nothing needs asking: relayed at once.
   */
  updateRefusal: (uri: string) => Promise<string | undefined> | undefined;
  /**
   * Whether what the server asks the host for is checked (server-asks.ts): its requests, and the
   * input requests in its 2026-07-28 answers. As the calls are: not at all without enforcement.
   */
  checkAsks: boolean;
  /** The server said `notifications/tools/list_changed`. */
  toolsChanged: () => void;
  /** The server's answer to a host request, its own bookkeeping done: for the host. */
  answered: (line: McpLine, msg: JsonObject) => void;
  /** The server answered `key`, which the host has no request open under (cancelled, say). */
  strayAnswer: (key: string) => void;
}

const UPDATED = 'notifications/resources/updated';

/** Why a server line that is not UTF-8 goes no further. */
const NOT_UTF8 = 'it is not UTF-8 (a host reads such bytes as other characters, or stops reading)';

export class ServerLines {
  private splitter = new LineSplitter(SERVER_LINE_CAP);
  private readonly updates: UpdateBacklog;

  constructor(private readonly parts: ServerLinesParts) {
    this.updates = new UpdateBacklog(parts.updateRefusal, parts.log);
  }

  /** The daemon's policy moved on: updates from now on are checked afresh (update-backlog.ts). */
  policyMoved(): void {
    this.updates.policyMoved();
  }

  /** A new server's output starts: nothing of the old one's last line is carried over. */
  restart(): void {
    this.splitter = new LineSplitter(SERVER_LINE_CAP);
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

  private onLine(split: SplitLine, inBatch = false, utf8?: boolean): void {
    if (isOverlong(split)) return this.onOverlong(split);
    const bytes = split;
    if (bytes.length === 0 || (bytes.length === 1 && bytes[0] === 0x0d)) return;
    if (looksLikeBatch(bytes)) return this.onBatch(bytes, inBatch);
    const { log, toServer, roots, subscriptions } = this.parts;
    const line = new McpLine(bytes);
    const { msg, method } = line;
    if (msg === undefined) {
      log.warn(
        `dropped a line from the server that is not a JSON-RPC message: ${line.text.slice(0, 200)}`,
      );
      return;
    }
    // As from the host: the proxy read U+FFFD where the host's reader may read another character.
    if (!(utf8 ?? isUtf8(bytes))) return this.refuse(line, NOT_UTF8, RpcCode.PARSE_ERROR);
    if (line.isResponse) {
      // A first-wins host reads the first of two ids, the proxy matched the last.
      const unreadable = unreadableServerLine(line);
      if (unreadable !== undefined) return this.refuse(line, unreadable, RpcCode.INVALID_REQUEST);
      return this.onResponse(line, msg);
    }
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
    // Sent as a request too: a host that dispatches by method alone acts on it all the same.
    if (method === UPDATED) return this.onUpdated(line);
    if (line.isRequest) {
      const refusal = this.parts.checkAsks ? askRefusal(method, line.msg?.params) : undefined;
      if (refusal !== undefined) return this.refuse(line, refusal, RpcCode.INVALID_PARAMS);
    }
    this.toHostAsked(line);
  }

  /** Pass a server line on; a request becomes one the host may answer. */
  private toHostAsked(line: McpLine): void {
    if (line.isRequest) this.parts.serverAsked.add(line.idKey);
    this.parts.toHost(line.bytes);
  }

  /**
   * A resource changed. A server subscribed to a directory may report any file below it (MCP
   * allows updates of a sub-resource), and one subscribed before the policy narrowed keeps
   * reporting: the host hears of a `file:` URI only if the server may read it now, as a
   * subscription to it would be checked. A checked notification reaches the host after the
   * daemon's answer, so it may pass lines the server wrote after it: an update is only a hint to
   * read again, and nothing refers to it. How many wait for their check at once is bounded
   * (update-backlog.ts): a flood while the daemon is slow drops what is past the bound.
   */
  private onUpdated(line: McpLine): void {
    const { log } = this.parts;
    const { uri } = line.params;
    /** Not passed on; a request (no notification has an id) is answered with an error. */
    const drop = (why: string, quiet = false): void => {
      if (!quiet) log.info(`dropped the server's ${UPDATED}: ${why}`);
      if (line.isRequest)
        this.refuseParts(line.idText, UPDATED, false, why, RpcCode.INVALID_PARAMS);
    };
    if (typeof uri !== 'string') {
      // A host reading it loosely (`${uri}` of `["file:///x"]`) would find a URI in it.
      return drop('params.uri is not a string');
    }
    const admission = this.updates.admit(uri, line.bytes.length);
    if (admission.kind === 'unchecked') return this.toHostAsked(line);
    // The backlog says so once per flood, not once per line.
    if (admission.kind === 'full') return drop(admission.why, true);
    admission.refusal.then(
      (why) => (why === undefined ? this.toHostAsked(line) : drop(why)),
      (err: unknown) => drop(`its check failed: ${String(err)}`),
    );
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
    // Elements are cut from the decoded text: whether they were UTF-8 is the batch's to say.
    const utf8 = isUtf8(bytes);
    for (const element of elements) this.onLine(Buffer.from(element, 'utf8'), true, utf8);
  }

  /**
   * A server line that goes no further than the proxy. A request is answered with an error under
   * its id; an answer is replaced by an error answer for whoever asked (the host, or the proxy),
   * never passed on rewritten; a notification is dropped. Each with a line in the log.
   */
  private refuse(line: McpLine, why: string, code: number): void {
    const what = line.isResponse
      ? `answer to id ${line.idText ?? 'null'}`
      : (line.method ?? 'line');
    this.parts.log.warn(`refused the server's ${what}: ${why}`);
    this.refuseParts(line.idText, line.method, line.isResponse, why, code);
  }

  /** `refuse` by what is known of the line: its id, its method, whether it is an answer. */
  private refuseParts(
    idText: string | undefined,
    method: string | undefined,
    answer: boolean,
    why: string,
    code: number,
  ): void {
    const message = `mcp-roots-proxy: the server's line was not passed on: ${why}`;
    if (idText === undefined || idText === 'null') return;
    if (answer && method === undefined) {
      const error = new McpLine(
        Buffer.from(errorLine(idText, { code: RpcCode.INTERNAL_ERROR, message })),
      );
      this.onResponse(error, error.msg!);
    } else if (method !== undefined) {
      this.parts.toServer(errorLine(idText, { code, message }));
    }
  }

  /** A line over the cap, of which only the head was kept. */
  private onOverlong({ head, tail, bytes }: OverlongLine): void {
    const { idText, method, answer } = lineEnds(head, tail);
    const why = `a line of ${bytes} bytes is over the ${SERVER_LINE_CAP} byte cap`;
    this.parts.log.warn(`refused a line from the server: ${why}: ${head.toString('utf8', 0, 200)}`);
    this.refuseParts(idText, method, answer, why, RpcCode.INVALID_REQUEST);
  }

  /**
   * An answer goes to whoever asked: the proxy's retries and own requests stay with it; a host
   * request gets it once, and only while open (relayed, not yet answered, not cancelled): an
   * answer the host never asked for could be taken for the answer to a later request under that id.
   */
  private onResponse(line: McpLine, msg: JsonObject): void {
    const { own, inputs, relayed, subscriptions, log } = this.parts;
    // An answer that would have the host ask what the server may not: an error for whoever asked.
    const refusal = this.parts.checkAsks ? inputRequestsRefusal(msg.result) : undefined;
    if (refusal !== undefined) {
      log.warn(`refused the server's answer to id ${line.idText ?? 'null'}: ${refusal}`);
      const message = `mcp-roots-proxy: the server's line was not passed on: ${refusal}`;
      const error = new McpLine(
        Buffer.from(errorLine(line.idText ?? 'null', { code: RpcCode.INTERNAL_ERROR, message })),
      );
      return this.onResponse(error, error.msg!);
    }
    // First: the proxy's retries of a host request carry ids of the proxy's own.
    if (inputs.onAnswer(line)) return;
    if (own.isOwn(msg)) {
      if (!own.settle(msg)) {
        log.warn(
          `dropped the server's answer to ${line.idText ?? 'null'}: no request of the proxy's own is open under it`,
        );
      }
      return;
    }
    const key = line.idKey;
    if (key === undefined || !relayed.has(key) || inputs.answeredUnderHostId(key)) {
      if (key !== undefined) this.parts.strayAnswer(key);
      const error = isObject(msg.error)
        ? ` (its error: ${JSON.stringify(msg.error).slice(0, 300)})`
        : '';
      log.warn(
        `dropped the server's answer to id ${line.idText ?? 'null'}: the host has no request open under it${error}`,
      );
      return;
    }
    relayed.settled(key);
    subscriptions.ended(key);
    this.parts.answered(line, msg);
  }
}
