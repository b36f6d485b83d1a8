/**
 * The host's requests on their way to the server: pending while they are checked (what a
 * cancellation stops), relayed (and remembered until answered), or answered by the proxy itself.
 * in-order.ts and docs/architecture.md ("What keeps its order") say why each step is where it is.
 */
import { errorLine, notificationLine, resultLine, type JsonObject } from '../protocol/messages.js';
import { RpcCode, type RpcErrorObject } from '../protocol/rpc-errors.js';
import { withModernRootsCapability, type Era } from './era.js';
import type { InputRequired } from './input-required.js';
import type { ProxyLogger } from './log.js';
import type { McpLine } from './mcp-line.js';
import { reservedId } from './own-requests.js';
import { PendingCalls, type PendingCall } from './pending-calls.js';
import { RecentKeys } from './recent-keys.js';
import { SERVER_GONE, type RelayedRequests } from './relayed.js';

/** What the request lifecycle needs from the router. */
export interface HostRequestsOptions {
  log: ProxyLogger;
  toServer: (data: Buffer | string) => void;
  toHost: (data: Buffer | string) => void;
  inputs: InputRequired;
  relayed: RelayedRequests;
  /** Whether the policy gives the server roots (a 2026-07-28 request says so in its `_meta`). */
  hasRoots: () => boolean;
  /** Resolves once no restart holds the host's messages. */
  whileHeld: () => Promise<void>;
  /** Whether the server has closed its output. */
  serverGone: () => boolean;
  /** Run a task beside the host's queue (in-order.ts). */
  beside: (task: Promise<void>) => void;
}

/** An answer the proxy gives a host request in the server's place. */
export type ProxyAnswer = { result: JsonObject } | { error: RpcErrorObject };

export class HostRequests {
  private readonly pending = new PendingCalls();
  /** Host requests the proxy answered itself (refused calls). */
  private readonly answered = new RecentKeys();
  /**
   * Host requests cancelled after they reached the server, which may still answer them (MCP says
   * it should not; nothing stops it): the host may not use the id again until that answer has
   * come, since it would be taken for the answer to the new request.
   */
  private cancelledAtServer = new RecentKeys();

  constructor(private readonly o: HostRequestsOptions) {}

  /**
   * Two requests in flight under one id: whichever answer came first, the host could not tell
   * whose it is. The first keeps the id; the second is refused here, unchecked. True if refused.
   */
  refusedDuplicate(line: McpLine): boolean {
    const key = line.idKey;
    if (!line.isRequest || key === undefined) return false;
    let message: string;
    if (this.pending.has(key) || this.o.relayed.has(key)) {
      message = `mcp-roots-proxy: request id ${line.idText} is already in use by a request that has not been answered; ids must be unique among requests in flight`;
    } else if (this.cancelledAtServer.has(key)) {
      message = `mcp-roots-proxy: request id ${line.idText} belongs to a request cancelled after it reached the server, which may still answer it; use a new id`;
    } else return false;
    this.o.toHost(errorLine(line.idText ?? 'null', { code: RpcCode.INVALID_REQUEST, message }));
    return true;
  }

  /** The server answered `key` though the host has no request open under it: the id is free. */
  strayAnswer(key: string): void {
    this.cancelledAtServer.delete(key);
  }

  /** Another server is behind the session: the old one's late answers can no longer come. */
  serverReplaced(): void {
    this.cancelledAtServer = new RecentKeys();
  }

  /**
   * A request whose handling waits: pending under its id from now (a cancellation stops it), then
   * checked and relayed, beside the queue. `check` gives the line to relay (the request itself,
   * or the call a retry resumes), or undefined when the proxy answered it (refused, say).
   * `relaying` runs just before it is relayed, and only then.
   */
  admitPending(
    line: McpLine,
    era: Era,
    check?: (signal: AbortSignal) => Promise<McpLine | undefined>,
    relaying?: () => void,
    /** Once the request is relayed, answered here, refused or dropped. */
    finished?: () => void,
  ): void {
    const call = this.pending.start(line.idKey);
    const task = (async () => {
      try {
        const checked = check === undefined ? line : await check(call.signal);
        if (checked === undefined) return;
        // A restart may have begun while the call was being checked: it goes to the new server.
        await this.o.whileHeld();
        if (call.signal.aborted) return;
        if (this.o.serverGone()) return this.refuseServerGone(line);
        relaying?.();
        await this.relay(checked, era, call);
      } finally {
        this.pending.finish(call);
        finished?.();
      }
    })();
    this.o.beside(task);
  }

  /**
   * The host cancelled a request. One still pending here never reached the server: its check
   * stops, and neither the cancellation nor any answer is sent. Otherwise the server is told.
   */
  cancel(line: McpLine): void {
    const key = line.cancelledKey;
    // The proxy's own requests (its tools/list, a retry) are not the host's to stop.
    if (reservedId(key)) {
      this.o.log.warn(`dropped the host's cancellation of ${key}: it is the proxy's own request`);
      return;
    }
    if (this.pending.cancel(key)) {
      this.o.log.debug(
        `the host cancelled request ${key} before it reached the server: it is not sent, and not answered`,
      );
      return;
    }
    if (key !== undefined) {
      if (this.o.relayed.has(key)) this.cancelledAtServer.add(key);
      const retry = this.o.inputs.forget(key);
      // The server knows the request by the proxy's retry id, not the host's.
      if (retry !== undefined) {
        this.o.toServer(notificationLine(line.method!, `{"requestId":${retry}}`));
      }
      this.o.relayed.settled(key);
    }
    if (this.answered.has(key)) return;
    this.o.toServer(line.bytes);
  }

  /**
   * Relay a host request, in one step with `call`'s end as pending (so that a cancellation that
   * comes next is passed on to the server). A 2026-07-28 one carries the client's capabilities:
   * the server is told of roots as the policy says. Every request is followed, of any method and
   * in either era (input-required.ts): a server may answer any of them `input_required` and ask
   * for roots, and a 2026-07-28 host's SDK answers such a result whatever the method, with the
   * host's own roots.
   */
  relay(line: McpLine, era: Era, call?: PendingCall): Promise<void> | void {
    const sent = (): void => {
      if (call !== undefined) this.pending.finish(call);
      // The id may have been a refused call's before: a cancellation of this one must go on.
      this.answered.delete(line.idKey);
      this.o.relayed.track(line.idText, line.method ?? 'a request');
    };
    const text =
      era === 'legacy' ? line.text : withModernRootsCapability(line.text, this.o.hasRoots());
    const signal = call?.signal ?? new AbortController().signal;
    return this.o.inputs.relay(line, text, { signal, sent });
  }

  /** Answer a host request in the server's place. */
  answer(line: McpLine, answer: ProxyAnswer): void {
    const idText = line.idText ?? 'null';
    this.answered.add(line.idKey);
    this.o.toHost(
      'result' in answer
        ? resultLine(idText, JSON.stringify(answer.result))
        : errorLine(idText, answer.error),
    );
  }

  /** A request refused in a batch was answered by the proxy (its cancellation goes nowhere). */
  answeredInBatch(key: string | undefined): void {
    this.answered.add(key);
  }

  /** The server is gone: a request is answered with an error instead of being sent. */
  refuseServerGone(line: McpLine): void {
    const message = `mcp-roots-proxy: ${line.method} not sent: ${SERVER_GONE}`;
    this.answer(line, { error: { code: RpcCode.INTERNAL_ERROR, message } });
  }
}
