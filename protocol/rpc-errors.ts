/** JSON-RPC error codes and the two-way mapping between `RootsError` and a wire error object. */
import { RootsError, type ErrorCode } from '../common/errors.js';

/** The JSON-RPC error codes mcp-roots uses: protocol faults, -32000 for every domain error of mcp-roots/1, and MCP's -32002 in the proxy. */
export const RpcCode = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  DOMAIN_ERROR: -32000,
  /** MCP's "resource not found": how the proxy refuses a `resources/read` outside the roots. */
  RESOURCE_NOT_FOUND: -32002,
} as const;

/** One of the numbers in `RpcCode`. */
export type RpcCodeNumber = (typeof RpcCode)[keyof typeof RpcCode];

/** A JSON-RPC error object as it travels. */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** The `data` of every error mcp-roots sends: the string code, and a hint when there is one. */
export interface RpcErrorData {
  code: ErrorCode;
  hint?: string;
}

// Record<ErrorCode, true> fails to compile when common/errors.ts gains or loses a code.
const KNOWN_CODES: Record<ErrorCode, true> = {
  POLICY_INVALID: true,
  POLICY_NOT_FOUND: true,
  PATH_NOT_FOUND: true,
  PATH_INVALID: true,
  GRANT_DENIED: true,
  LOCKDOWN: true,
  SERVER_NAME_INVALID: true,
  DAEMON_UNREACHABLE: true,
  DAEMON_RUNNING: true,
  SOCKET_PATH_TOO_LONG: true,
  SOCKET_DIR_UNSAFE: true,
  STATE_DIR_UNSAFE: true,
  PROTOCOL: true,
  TIMEOUT: true,
  USAGE: true,
  INTERNAL: true,
};

/** Whether a string is one of the project's error codes. */
export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(KNOWN_CODES, value);
}

/** A `RootsError` that also carries its JSON-RPC code: what a handler throws for a protocol fault, and what the client throws for every error answer. */
export class RpcError extends RootsError {
  readonly rpcCode: number;
  /** The error's `data` as received from the wire (undefined for errors made locally). */
  readonly data: unknown;

  constructor(
    rpcCode: number,
    code: ErrorCode,
    message: string,
    options: { hint?: string; cause?: unknown; data?: unknown } = {},
  ) {
    super(code, message, options);
    this.name = 'RpcError';
    this.rpcCode = rpcCode;
    this.data = options.data;
  }
}

/** A `-32602` error for a params field, e.g. `invalidParams('roots/list: params.server must be ...')`. */
export function invalidParams(message: string, code: ErrorCode = 'USAGE'): RpcError {
  return new RpcError(RpcCode.INVALID_PARAMS, code, message);
}

function dataOf(err: RootsError): RpcErrorData {
  return err.hint === undefined ? { code: err.code } : { code: err.code, hint: err.hint };
}

/**
 * The wire error for anything a request handler threw: an `RpcError` keeps its number; any other
 * `RootsError` is a domain error (`-32000`); anything else is `-32603` with no message or stack of
 * its own, since those are for the daemon's log, not for the peer.
 */
export function toRpcErrorObject(err: unknown, method: string): RpcErrorObject {
  if (err instanceof RpcError) {
    return { code: err.rpcCode, message: err.message, data: dataOf(err) };
  }
  if (err instanceof RootsError) {
    return { code: RpcCode.DOMAIN_ERROR, message: err.message, data: dataOf(err) };
  }
  return {
    code: RpcCode.INTERNAL_ERROR,
    message: `internal error while handling ${method}; the daemon's log has the details`,
    data: { code: 'INTERNAL' } satisfies RpcErrorData,
  };
}

function defaultCode(rpcCode: number): ErrorCode {
  switch (rpcCode) {
    case RpcCode.INVALID_PARAMS:
      return 'USAGE';
    case RpcCode.INTERNAL_ERROR:
    case RpcCode.DOMAIN_ERROR:
      return 'INTERNAL';
    default:
      return 'PROTOCOL';
  }
}

/** Turn an error object received for `method` back into an `RpcError` with the same string code. */
export function fromRpcErrorObject(value: unknown, method: string): RpcError {
  if (typeof value !== 'object' || value === null) {
    return new RpcError(
      RpcCode.INTERNAL_ERROR,
      'PROTOCOL',
      `${method}: the peer answered with a malformed error (not an object)`,
    );
  }
  const { code, message, data } = value as Record<string, unknown>;
  if (typeof code !== 'number' || !Number.isInteger(code) || typeof message !== 'string') {
    return new RpcError(
      RpcCode.INTERNAL_ERROR,
      'PROTOCOL',
      `${method}: the peer answered with a malformed error (code must be an integer, message a string)`,
      { data },
    );
  }
  let stringCode = defaultCode(code);
  let hint: string | undefined;
  if (typeof data === 'object' && data !== null) {
    const d = data as Record<string, unknown>;
    if (isErrorCode(d.code)) stringCode = d.code;
    if (typeof d.hint === 'string') hint = d.hint;
  }
  return new RpcError(code, stringCode, message, hint === undefined ? { data } : { hint, data });
}
