/**
 * The hostile fixture server run by the proxy under bubblewrap (`--sandbox`, with the tool-call
 * check off so that only the kernel decides), and how a test follows the restarts the proxy's deny
 * watch makes: a denied path appearing in the roots is reported on stderr and restarts the server
 * with new mounts.
 */
import { join } from 'node:path';
import { HOSTILE_SERVER, startProxied, type Proxied } from './proxied-server.js';
import { waitFor } from './proxy.js';

/** What the proxy writes when its watch finds a denied path in a sandboxed server's roots. */
export const DENIED_APPEARED = 'a denied path appeared in the roots:';

/** How many times `text` stands in the proxy's stderr so far. */
export const count = (h: Proxied, text: string): number => h.stderr().split(text).length - 1;

/** No restart under way: as many ended (well or not) as began. */
export const restartsIdle = (h: Proxied): boolean =>
  count(h, 'restarting the server:') ===
  count(h, 'restarted the server (ms:') + count(h, 'did not take the host');

/** Server `server` of the daemon at `socket`, sandboxed; `env` goes to the proxy. */
export function startBoxed(
  t: { teardown(fn: () => unknown): void },
  socket: string,
  env?: Record<string, string | undefined>,
  server = 'h',
): Promise<Proxied> {
  return startProxied(t, {
    server,
    socket,
    proxyArgs: ['--sandbox', '--no-enforce'],
    command: [process.execPath, HOSTILE_SERVER],
    ...(env === undefined ? {} : { env }),
  });
}

/**
 * Once no restart is under way, run `change`, then wait until the proxy reports one more denied
 * path than before it (`what` names the change in a timeout's message). Returns the count before.
 */
export async function changeUntilReported(
  h: Proxied,
  what: string,
  change: () => unknown,
): Promise<number> {
  await waitFor(() => restartsIdle(h), 30_000, `no restart under way before: ${what}`);
  const before = count(h, DENIED_APPEARED);
  await change();
  await waitFor(() => count(h, DENIED_APPEARED) > before, 30_000, `the proxy saw ${what}`);
  return before;
}

/**
 * The hostile server makes `trigger` and a `.env` in it (denied by the test's policy) with its own
 * system calls, and the proxy restarts it with a new layout; resolves once the restart ended.
 */
export async function serverForcesRestart(h: Proxied, trigger: string, why: string): Promise<void> {
  await changeUntilReported(h, `the .env made for: ${why}`, async () => {
    await h.call('attempt', { action: 'mkdir', ref: trigger, to: '' });
    // The server is stopped as the name appears: this call may be answered "call again".
    await h.call('attempt', { action: 'write', ref: join(trigger, '.env'), to: '' }).catch(() => 0);
  });
  await waitFor(() => restartsIdle(h), 30_000, `the restart after: ${why}`);
}
