/** The wire shared by the daemon, the CLI, the proxy and the client library. */
export { RootsClient, DEFAULT_CLIENT_TIMEOUT_MS } from './client.js';
export type { ClientEvents, ConnectOptions, GrantOptions } from './client.js';
export {
  JsonRpcConnection,
  DEFAULT_CLOSE_GRACE_MS,
  DEFAULT_MAX_QUEUED_BYTES,
} from './connection.js';
export type {
  ConnectionEvents,
  JsonRpcConnectionOptions,
  NotificationHandler,
  RequestHandler,
  RequestOptions,
} from './connection.js';
export { CLIENT_MAX_LINE_BYTES, DEFAULT_MAX_LINE_BYTES, LineFramer } from './framer.js';
export type { FramedLines, LineFramerOptions } from './framer.js';
export { parseMessage } from './messages.js';
export type { Incoming, RpcId } from './messages.js';
export { DAEMON_NAME, PROTOCOL_VERSION } from './methods.js';
export type * from './methods.js';
export { RawJson, rawJson, RawJsonBytes, rawJsonBytes } from './raw-json.js';
export {
  RpcCode,
  RpcError,
  fromRpcErrorObject,
  invalidParams,
  isErrorCode,
  toRpcErrorObject,
} from './rpc-errors.js';
export type { RpcCodeNumber, RpcErrorData, RpcErrorObject } from './rpc-errors.js';
export {
  MAX_SOCKET_PATH_BYTES,
  SOCKET_ENV,
  checkSocketDir,
  checkSocketPathLength,
  ensureSocketDir,
  lockName,
  resolveSocketPath,
} from './socket-path.js';
export type { SocketPathInput } from './socket-path.js';
export {
  MAX_SERVER_NAME_LENGTH,
  isMethod,
  isNotificationMethod,
  isValidServerName,
  notificationValidators,
  paramValidators,
  validateNotificationParams,
  validateParams,
} from './validate-params.js';
