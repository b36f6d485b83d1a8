/**
 * The one place JSON-RPC 2.0 messages are built and recognised: the sorting of one received line
 * into request, notification, response or fault (the daemon's strict reading), the guards the proxy
 * uses on lines it relays, the builders of every line the project writes, and ids compared by their
 * exact text.
 */
import { RpcCode, type RpcErrorObject } from './rpc-errors.js';

/** A request id: JSON-RPC allows a number, a string or null; it is echoed exactly as received. */
export type RpcId = number | string | null;

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

/** A parsed JSON object, as the guards below take it. */
export type JsonObject = Record<string, unknown>;

/** A request: a method and an id (which may be null). */
export function isRequest(msg: JsonObject): boolean {
  return typeof msg.method === 'string' && 'id' in msg;
}

/** An answer: an id with a result or an error, and no method. */
export function isResponse(msg: JsonObject): boolean {
  return msg.method === undefined && 'id' in msg && ('result' in msg || 'error' in msg);
}

// The builders take ids and JSON values as text, so that an id is echoed byte for byte (ids above
// 2^53 survive) and a value serialised once is not serialised again. Each line is one JSON object
// without the newline.

/** The text of an id the project chose itself (a number or a string). */
export function idText(id: RpcId): string {
  return JSON.stringify(id);
}

/** A request line. */
export function requestLine(id: string, method: string, paramsText: string): string {
  return `{"jsonrpc":"2.0","id":${id},"method":${JSON.stringify(method)},"params":${paramsText}}`;
}

/** A notification line; without params when `paramsText` is undefined. */
export function notificationLine(method: string, paramsText?: string): string {
  const params = paramsText === undefined ? '' : `,"params":${paramsText}`;
  return `{"jsonrpc":"2.0","method":${JSON.stringify(method)}${params}}`;
}

/** A notification line's text before and after its params' text (for params kept as bytes). */
export function notificationLineAround(method: string): [before: string, after: string] {
  return [`{"jsonrpc":"2.0","method":${JSON.stringify(method)},"params":`, '}'];
}

/** A result line answering the request whose id is `id` (its exact text). */
export function resultLine(id: string, resultText: string): string {
  return `{"jsonrpc":"2.0","id":${id},"result":${resultText}}`;
}

/** A result line's text before and after its result's text (for a result kept as bytes). */
export function resultLineAround(id: string): [before: string, after: string] {
  return [`{"jsonrpc":"2.0","id":${id},"result":`, '}'];
}

/** An error line answering the request whose id is `id` (its exact text). */
export function errorLine(id: string, error: RpcErrorObject): string {
  return `{"jsonrpc":"2.0","id":${id},"error":${JSON.stringify(error)}}`;
}

/**
 * A key for comparing JSON-RPC ids (or progress tokens) by their exact text: `s:` and the string,
 * or `n:` and the number as written, so that 2^53 + 1 and 2^53 stay apart. Null and no id have none.
 */
export function idKey(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (raw.startsWith('"')) return `s:${JSON.parse(raw) as string}`;
  return raw === 'null' ? undefined : `n:${numberKey(raw)}`;
}

/**
 * One spelling per number, exactly (no rounding through a double): `3`, `3.0`, `30e-1` and
 * `0.3e1` are one id to a peer that parses them, so they must be one id to the proxy too, or a
 * second request under `3.0` would pass as a different one while `3` is still pending.
 */
function numberKey(raw: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(raw);
  if (m === null) return raw;
  const fraction = m[3] ?? '';
  let digits = (m[2]! + fraction).replace(/^0+/, '');
  if (digits === '') return '0';
  let exponent = Number(m[4] ?? '0') - fraction.length;
  const zeros = /0*$/.exec(digits)![0].length;
  digits = digits.slice(0, digits.length - zeros);
  exponent += zeros;
  const sign = m[1]!;
  // Integers in plain digits (the usual id), anything else as digits and an exponent.
  if (exponent >= 0 && exponent < 64) return `${sign}${digits}${'0'.repeat(exponent)}`;
  return `${sign}${digits}e${exponent}`;
}
