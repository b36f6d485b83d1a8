/** JSON-RPC 2.0 envelopes, and the sorting of one received line into request, notification, response or fault. */
import { RpcCode, type RpcErrorObject } from './rpc-errors.js';

/** A request id: JSON-RPC allows a number, a string or null; it is echoed exactly as received. */
export type RpcId = number | string | null;

/** A request as sent. */
export interface RequestMessage {
  jsonrpc: '2.0';
  id: RpcId;
  method: string;
  params?: unknown;
}

/** A notification as sent (no id, no answer). */
export interface NotificationMessage {
  jsonrpc: '2.0';
  method: string;
  params?: unknown;
}

/** An answer as sent: a result or an error. */
export type ResponseMessage =
  | { jsonrpc: '2.0'; id: RpcId; result: unknown }
  | { jsonrpc: '2.0'; id: RpcId; error: RpcErrorObject };

/** What one received line turned out to be; `invalid` carries the error to answer with. */
export type Incoming =
  | { kind: 'request'; id: RpcId; method: string; params: unknown }
  | { kind: 'notification'; method: string; params: unknown }
  | { kind: 'response'; id: unknown; result: unknown }
  | { kind: 'error'; id: unknown; error: unknown }
  | { kind: 'invalid'; id: RpcId; code: number; message: string };

function isId(value: unknown): value is RpcId {
  // 1e999 parses to Infinity, which JSON.stringify would echo as null: not the id that was sent.
  return (
    value === null ||
    typeof value === 'string' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

function invalid(id: RpcId, message: string): Incoming {
  return { kind: 'invalid', id, code: RpcCode.INVALID_REQUEST, message };
}

/** Parse and classify one line (never throws). */
export function parseMessage(line: string): Incoming {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return {
      kind: 'invalid',
      id: null,
      code: RpcCode.PARSE_ERROR,
      message: 'parse error: the line is not valid JSON (send one JSON-RPC message per line)',
    };
  }
  if (Array.isArray(value)) {
    return invalid(null, 'batches are not supported: send one JSON-RPC message per line');
  }
  if (typeof value !== 'object' || value === null) {
    return invalid(null, 'a JSON-RPC message must be a JSON object');
  }
  const msg = value as Record<string, unknown>;
  const hasId = Object.hasOwn(msg, 'id');
  const id = hasId && isId(msg.id) ? msg.id : null;
  if (msg.jsonrpc !== '2.0') return invalid(id, 'jsonrpc must be "2.0"');
  if (Object.hasOwn(msg, 'method')) {
    const method = msg.method;
    if (typeof method !== 'string') return invalid(id, 'method must be a string');
    if (!hasId) return { kind: 'notification', method, params: msg.params };
    if (!isId(msg.id)) return invalid(null, 'id must be a finite number, a string or null');
    return { kind: 'request', id, method, params: msg.params };
  }
  if (Object.hasOwn(msg, 'error')) return { kind: 'error', id: msg.id, error: msg.error };
  if (Object.hasOwn(msg, 'result')) return { kind: 'response', id: msg.id, result: msg.result };
  return invalid(id, 'a message needs a method (request or notification) or a result or error');
}
