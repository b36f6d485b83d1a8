/** A JSON-RPC 2.0 connection over any readable/writable pair: pairs answers with requests, dispatches by method. */
import { EventEmitter } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { RootsError } from '../common/errors.js';
import { DEFAULT_MAX_LINE_BYTES, LineFramer, lineText } from './framer.js';
import { ListReuse } from './list-reuse.js';
import {
  errorLine,
  idText,
  notificationLine,
  notificationLineAround,
  parseMessage,
  requestLine,
  resultLine,
  resultLineAround,
  type RpcId,
} from './messages.js';
import type { Method, NotificationMethod, Notifications, ParamsOf, ResultOf } from './methods.js';
import { PendingRequests } from './pending.js';
import { jsonText, RawJsonBytes, type RawJson } from './raw-json.js';
import {
  fromRpcErrorObject,
  RpcCode,
  toRpcErrorObject,
  type RpcErrorObject,
} from './rpc-errors.js';
import {
  isMethod,
  isNotificationMethod,
  validateNotificationParams,
  validateParams,
} from './validate-params.js';

/** The default cap on output queued for a peer that does not read (docs/protocol.md: 1 MiB). */
/** How the reason for closing on a line past the cap begins (the client tells it apart). */
export const TOO_LONG = 'a message is longer than';

export const DEFAULT_MAX_QUEUED_BYTES = 1024 * 1024;

/** How long `close()` waits for queued output to flush before it destroys the streams. */
export const DEFAULT_CLOSE_GRACE_MS = 1000;

/** Options for `JsonRpcConnection`. */
export interface JsonRpcConnectionOptions {
  /** Cap on one incoming line in bytes (default 1 MiB); a longer line gets `-32600` and closes. */
  maxLineBytes?: number;
  /** Cap on output the peer has not read yet (default 1 MiB); past it the streams are destroyed. */
  maxQueuedBytes?: number;
  /** How long a graceful close may wait for output to flush (default 1000 ms). */
  closeGraceMs?: number;
  /** What cannot be answered: a handler's unexpected exception, a bad notification. For a log. */
  onError?: (err: unknown, context: string) => void;
  /** The error pending requests reject with when the connection closes. */
  closedError?: (method: string, reason: string) => Error;
  /**
   * Read each large `list_changed` by its difference from the last one for the same server
   * (list-reuse.ts): roots that did not change are the objects of the last list. For clients.
   */
  reuseLists?: boolean;
}

/** Per-request options. */
export interface RequestOptions {
  /** Reject with a `TIMEOUT` error if no answer arrives in time (default, or `Infinity`: wait for ever). */
  timeoutMs?: number;
}

/** Handles request `M`; may be async; throw a `RootsError` for a domain error (`-32000`). */
export type RequestHandler<M extends Method> = (
  params: ParamsOf<M>,
) => Answer<ResultOf<M>> | Promise<Answer<ResultOf<M>>>;

/** What a handler may answer: the value, its JSON text, or its JSON as bytes. */
type Answer<T> = T | RawJson<T> | RawJsonBytes<T>;

/** Handles notification `N`. */
export type NotificationHandler<N extends NotificationMethod> = (params: Notifications[N]) => void;

/** Events of `JsonRpcConnection`: `close` once, with the reason. */
export interface ConnectionEvents {
  close: [reason: string];
}

const MAX_ECHOED_METHOD = 100;
const LIST_CHANGED = 'notifications/roots/list_changed';

function defaultClosedError(method: string, reason: string): Error {
  return new RootsError(
    'PROTOCOL',
    `${method}: the connection closed before the answer arrived (${reason})`,
  );
}

function waitClosed(stream: Readable | Writable): Promise<void> {
  return new Promise((resolve) => {
    if (stream.closed) resolve();
    else stream.once('close', () => resolve());
  });
}

/** JSON-RPC over lines on a readable and a writable (a socket twice, stdio, or test streams). */
export class JsonRpcConnection extends EventEmitter<ConnectionEvents> {
  private readonly framer: LineFramer;
  private readonly maxQueuedBytes: number;
  private readonly closeGraceMs: number;
  private readonly onError: (err: unknown, context: string) => void;
  private readonly closedError: (method: string, reason: string) => Error;
  private readonly pending = new PendingRequests<number>();
  private readonly requestHandlers = new Map<string, (params: never) => unknown>();
  private readonly notificationHandlers = new Map<string, (params: never) => void>();
  private readonly lists: ListReuse | undefined;
  private nextId = 1;
  private inFlight = 0;
  private inputEnded = false;
  private reason: string | undefined;
  private closePromise: Promise<void> | undefined;

  constructor(
    private readonly readable: Readable,
    private readonly writable: Writable,
    options: JsonRpcConnectionOptions = {},
  ) {
    super();
    this.framer = new LineFramer({ maxLineBytes: options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES });
    this.maxQueuedBytes = options.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
    this.closeGraceMs = options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS;
    this.onError = options.onError ?? (() => {});
    this.closedError = options.closedError ?? defaultClosedError;
    this.lists = options.reuseLists === true ? new ListReuse() : undefined;

    // A socket is both ends; stdio or test streams are two.
    const sameStream = (readable as unknown) === writable;
    readable.on('data', (chunk: Buffer | string) => this.onData(chunk));
    readable.on('end', () => {
      this.inputEnded = true;
      this.maybeFinish();
    });
    readable.on('error', (err) => {
      void this.shutdown(`${sameStream ? 'connection' : 'input'} error: ${err.message}`, false);
    });
    // After a clean end the answers still in flight may be written (a half-closed socket, stdio).
    readable.on('close', () => {
      if (!this.inputEnded || sameStream) void this.shutdown('connection closed', false);
    });
    if (!sameStream) {
      writable.on('error', (err) => void this.shutdown(`output error: ${err.message}`, false));
      writable.on('close', () => void this.shutdown('output closed', false));
    }
  }

  /** Whether the connection is closing or closed. */
  get closed(): boolean {
    return this.closePromise !== undefined;
  }

  /** Why the connection closed, once it has. */
  get closeReason(): string | undefined {
    return this.reason;
  }

  /** Send request `method` and wait for its typed result; an error answer rejects with an `RpcError`. */
  request<M extends Method>(
    method: M,
    params: ParamsOf<M>,
    options: RequestOptions = {},
  ): Promise<ResultOf<M>> {
    if (this.closePromise !== undefined) {
      return Promise.reject(this.closedError(method, this.reason ?? 'closed'));
    }
    const id = this.nextId++;
    const answer = this.pending.wait(id, method, options.timeoutMs) as Promise<ResultOf<M>>;
    this.writeLine(requestLine(idText(id), method, jsonText(params)));
    return answer;
  }

  /** Send notification `method`; false when the connection is closed or was just closed for not reading. */
  notify<N extends NotificationMethod>(
    method: N,
    params: Notifications[N] | RawJson<Notifications[N]>,
  ): boolean {
    return this.writeLine(notificationLine(method, jsonText(params)));
  }

  /**
   * Send a notification made once by `encodeNotification`: a push to many connections encodes
   * its list once, not once per connection. False as for `notify`.
   */
  notifyEncoded(line: EncodedNotification): boolean {
    return this.writeLine(line.parts);
  }

  /**
   * `notifyEncoded` for a message that supersedes the one sent before it under the same `key`
   * (a server's whole list). While the peer has yet to read earlier output, only the newest such
   * message is kept, and written once it has: a slow reader of large lists gets the latest list,
   * not a pile of stale ones and a disconnection for the pile.
   */
  notifyLatest(key: string, line: EncodedNotification): boolean {
    const w = this.writable;
    if (this.closePromise !== undefined || w.destroyed || w.writableEnded) return false;
    if (!w.writableNeedDrain && this.owed.size === 0) return this.writeLine(line.parts);
    this.owed.delete(key);
    this.owed.set(key, line);
    if (this.owed.size === 1) w.once('drain', this.payOwed);
    return true;
  }

  /** Handle incoming request `method`; its params arrive validated. Methods without a handler get `-32601`. */
  onRequest<M extends Method>(method: M, handler: RequestHandler<M>): this {
    this.requestHandlers.set(method, handler);
    return this;
  }

  /** Handle incoming notification `method`; its params arrive validated (bad ones go to `onError`). */
  onNotification<N extends NotificationMethod>(method: N, handler: NotificationHandler<N>): this {
    this.notificationHandlers.set(method, handler);
    return this;
  }

  /** Flush what is queued, close both streams, reject pending requests; the same promise every time. */
  close(): Promise<void> {
    return this.shutdown('closed locally', true);
  }

  private onData(chunk: Buffer | string): void {
    if (this.closePromise !== undefined) return;
    const { lines, overflow } = this.framer.pushBytes(
      typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk,
    );
    for (const line of lines) {
      if (this.closePromise !== undefined) return;
      const reused = this.lists?.take(line);
      if (reused !== undefined) {
        this.onNotificationMessage(LIST_CHANGED, reused);
        continue;
      }
      const text = lineText(line);
      if (text !== undefined) this.onLine(text, line);
      else {
        this.sendError(null, {
          code: RpcCode.PARSE_ERROR,
          message: 'a message that is not UTF-8 text was ignored (JSON text must be UTF-8)',
          data: { code: 'PROTOCOL' },
        });
      }
    }
    if (overflow && this.closePromise === undefined) {
      const max = this.framer.maxLineBytes;
      this.sendError(null, {
        code: RpcCode.INVALID_REQUEST,
        message: `${TOO_LONG} ${max} bytes; the connection is closed`,
        data: { code: 'PROTOCOL' },
      });
      void this.shutdown(`${TOO_LONG} ${max} bytes`, true);
    }
  }

  private onLine(line: string, bytes: Buffer): void {
    // A blank line (a person pressing Enter in socat) is not a message.
    if (line.trim() === '') return;
    const msg = parseMessage(line);
    switch (msg.kind) {
      case 'invalid':
        this.sendError(msg.id, {
          code: msg.code,
          message: msg.message,
          data: { code: 'PROTOCOL' },
        });
        return;
      case 'request':
        this.onRequestMessage(msg.id, msg.method, msg.params);
        return;
      case 'notification':
        this.onNotificationMessage(msg.method, msg.params, bytes);
        return;
      case 'response':
      case 'error':
        this.onResponse(msg.id, msg);
        return;
    }
  }

  private onRequestMessage(id: RpcId, method: string, params: unknown): void {
    const handler = this.requestHandlers.get(method);
    if (handler === undefined || !isMethod(method)) {
      const shown =
        method.length > MAX_ECHOED_METHOD ? `${method.slice(0, MAX_ECHOED_METHOD)}…` : method;
      this.sendError(id, {
        code: RpcCode.METHOD_NOT_FOUND,
        message: `method not found: ${JSON.stringify(shown)}`,
        data: { code: 'PROTOCOL' },
      });
      return;
    }
    let typed: unknown;
    try {
      typed = validateParams(method, params);
    } catch (err) {
      this.sendError(id, toRpcErrorObject(err, method));
      return;
    }
    let result: unknown;
    try {
      result = handler(typed as never);
      // A handler with the answer at hand (a list from the snapshot) is answered in this turn:
      // no promise and no microtask between the request's line and its answer's write.
      if (!isThenable(result)) {
        this.answer(id, result);
        return;
      }
    } catch (err) {
      this.answerError(id, method, err);
      return;
    }
    this.inFlight++;
    void this.awaitAnswer(id, method, result);
  }

  private async awaitAnswer(id: RpcId, method: string, pending: unknown): Promise<void> {
    try {
      this.answer(id, await pending);
    } catch (err) {
      this.answerError(id, method, err);
    } finally {
      this.inFlight--;
      this.maybeFinish();
    }
  }

  private answer(id: RpcId, result: unknown): void {
    if (result instanceof RawJsonBytes) {
      // Sent as the bytes it is made of: a large list is never one string to encode.
      this.writeLine(framed(resultLineAround(idText(id)), result.parts));
    } else {
      this.writeLine(resultLine(idText(id), jsonText(result ?? null)));
    }
  }

  private answerError(id: RpcId, method: string, err: unknown): void {
    // RootsErrors are answers; anything else is a bug, for the log and not for the peer.
    if (!(err instanceof RootsError)) this.onError(err, `handler for ${method}`);
    this.sendError(id, toRpcErrorObject(err, method));
  }

  /** `bytes`: the line, when it was parsed whole (a list to read the next one by). */
  private onNotificationMessage(method: string, params: unknown, bytes?: Buffer): void {
    const handler = this.notificationHandlers.get(method);
    // Unknown notifications are ignored: they cannot be answered, and a newer peer may send more.
    if (handler === undefined || !isNotificationMethod(method)) return;
    let valid;
    try {
      valid = validateNotificationParams(method, params);
    } catch (err) {
      this.onError(err, `notification ${method}`);
      return;
    }
    if (bytes !== undefined && method === LIST_CHANGED)
      this.lists?.keep(bytes, valid as Notifications[typeof LIST_CHANGED]);
    try {
      handler(valid as never);
    } catch (err) {
      this.onError(err, `notification ${method}`);
    }
  }

  private onResponse(
    id: unknown,
    msg: { kind: 'response'; result: unknown } | { kind: 'error'; error: unknown },
  ): void {
    // Our ids are numbers; an answer to anything else is not ours to pair.
    const awaited = typeof id === 'number' ? this.pending.take(id) : undefined;
    if (awaited === undefined) return;
    if (msg.kind === 'response') awaited.resolve(msg.result);
    else awaited.reject(fromRpcErrorObject(msg.error, awaited.method));
  }

  private sendError(id: RpcId, error: RpcErrorObject): void {
    this.writeLine(errorLine(idText(id), error));
  }

  /** The newest superseding message per key, waiting for the peer to read (`notifyLatest`). */
  private readonly owed = new Map<string, EncodedNotification>();

  /** Write what `notifyLatest` kept, oldest key first, until the peer falls behind again. */
  private readonly payOwed = (): void => {
    for (const [key, line] of this.owed) {
      this.owed.delete(key);
      if (!this.writeLine(line.parts)) return;
      if (this.writable.writableNeedDrain && this.owed.size > 0) {
        this.writable.once('drain', this.payOwed);
        return;
      }
    }
  };

  /**
   * Write one message and its newline; false when closed, or closed now for a peer that does not
   * read. A message given as pieces (a line already framed, newline included) is written piece
   * by piece under one cork, so the stream hands them to the socket together (one `writev`),
   * never copied into one buffer: a fresh buffer of a 3 MB list costs its every page on first
   * touch, tens of ms on a virtual machine, in one turn of the event loop.
   */
  private writeLine(message: string | readonly Buffer[]): boolean {
    const w = this.writable;
    if (this.closePromise !== undefined || w.destroyed || w.writableEnded) return false;
    let length: number;
    if (typeof message === 'string') {
      const line = message + '\n';
      w.write(line);
      length = line.length;
    } else if (message.length === 1) {
      w.write(message[0]);
      length = message[0]!.length;
    } else {
      length = 0;
      w.cork();
      for (const part of message) {
        w.write(part);
        length += part.length;
      }
      w.uncork();
    }
    // One message larger than the cap is allowed (answers may reach 64 MiB); what may not pile
    // up is output queued before it. writableLength counts a string's UTF-16 units.
    if (w.writableLength - length > this.maxQueuedBytes) {
      void this.shutdown(
        `the peer is not reading: more than ${this.maxQueuedBytes} bytes of output queued`,
        false,
      );
      return false;
    }
    return true;
  }

  private maybeFinish(): void {
    if (this.inputEnded && this.inFlight === 0)
      void this.shutdown('the peer closed the connection', true);
  }

  private shutdown(reason: string, graceful: boolean): Promise<void> {
    if (this.closePromise !== undefined) return this.closePromise;
    this.reason = reason;
    const { readable, writable } = this;
    let resolveClosed!: () => void;
    this.closePromise = new Promise<void>((resolve) => {
      resolveClosed = resolve;
    });
    this.pending.rejectAll((method) => this.closedError(method, reason));
    this.lists?.clear();

    let fallback: NodeJS.Timeout | undefined;
    const destroy = (): void => {
      if (fallback !== undefined) clearTimeout(fallback);
      readable.destroy();
      writable.destroy();
    };
    if (graceful && !writable.destroyed) {
      // Flush what is queued (an error answer, say) before closing; a peer that never reads
      // gets the grace period and no more.
      fallback = setTimeout(destroy, this.closeGraceMs);
      if (!writable.writableEnded) writable.end();
      if (writable.writableFinished) destroy();
      else writable.once('finish', destroy);
    } else {
      destroy();
    }
    void Promise.all([waitClosed(readable), waitClosed(writable)]).then(() => {
      if (fallback !== undefined) clearTimeout(fallback);
      this.emit('close', reason);
      resolveClosed();
    });
    return this.closePromise;
  }
}

/** What `await` would wait for: anything with a `then` method. */
function isThenable(value: unknown): boolean {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** A notification's line, newline included, encoded once to be sent on many connections. */
export interface EncodedNotification {
  /** The line's bytes in order (shared, never written to). */
  readonly parts: readonly Buffer[];
  /** Their total length. */
  readonly length: number;
}

/** Encode notification `method` once (see `notifyEncoded`). */
export function encodeNotification<N extends NotificationMethod>(
  method: N,
  params: Notifications[N] | RawJson<Notifications[N]> | RawJsonBytes<Notifications[N]>,
): EncodedNotification {
  let parts =
    params instanceof RawJsonBytes
      ? framed(notificationLineAround(method), params.parts)
      : [Buffer.from(`${notificationLine(method, jsonText(params))}\n`)];
  let length = 0;
  for (const p of parts) length += p.length;
  // A short line is joined once here, so that each connection writes one buffer (one `write`,
  // no cork): for a push to 1,000 subscribers the per-socket stream work is most of the push.
  if (parts.length > 1 && length <= SHORT_LINE_BYTES) parts = [Buffer.concat(parts, length)];
  return { parts, length };
}

/** Up to this many bytes a notification is one buffer (longer ones stay pieces: `writeLine`). */
const SHORT_LINE_BYTES = 64 * 1024;

/**
 * One line, newline included, from the text around a value and the value's bytes, as pieces to
 * write in order: the value's bytes are not copied (see `writeLine`).
 */
function framed([before, after]: [string, string], parts: readonly Buffer[]): Buffer[] {
  return [Buffer.from(before), ...parts, Buffer.from(`${after}\n`)];
}
