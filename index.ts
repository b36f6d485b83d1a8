/** mcp-roots as a library: the client for hosts, the protocol types, and the policy engine. */
export { RootsClient, DEFAULT_CLIENT_TIMEOUT_MS } from './protocol/client.js';
export type { ClientEvents, ConnectOptions, GrantOptions } from './protocol/client.js';
export { resolveSocketPath } from './protocol/socket-path.js';
export type * from './protocol/methods.js';
export { RootsError, type ErrorCode } from './common/errors.js';
export type * from './common/types.js';
export { loadAndResolve, parsePolicyText, nodeFs } from './policies/index.js';
export { attachRoots, type AttachRootsOptions, type AttachedRoots } from './proxy/attach-roots.js';
