/** Reaching the daemon as rootsctl. */
import { resolve } from 'node:path';
import { closing } from '../common/closing.js';
import { packageVersion } from '../common/package-info.js';
import { RootsClient } from '../protocol/client.js';
import { daemonStartHint } from './hint.js';
import type { Io } from './io.js';

/**
 * Connect to the daemon as rootsctl; a relative `--socket` means what it means in the caller's
 * directory. Blocking lookups (protocol/socket-lookups.ts): while it connects, a rootsctl
 * command (`watch`'s reconnects included) has nothing else to serve.
 */
export function connect(
  io: Io,
  socket: string | undefined,
  timeoutMs?: number,
): Promise<RootsClient> {
  return RootsClient.connect({
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    socket: socket === undefined ? undefined : resolve(io.cwd, socket),
    env: io.env,
    clientInfo: { name: 'rootsctl', version: packageVersion() },
    startHint: () => daemonStartHint(io, socket),
    lookups: 'blocking',
  });
}

/** Connect, run `use`, and close the connection whatever happens. */
export async function withClient<T>(
  io: Io,
  socket: string | undefined,
  use: (client: RootsClient) => Promise<T>,
): Promise<T> {
  return closing(await connect(io, socket), use);
}
