/**
 * A process that answers on a socket as a daemon would, with a `daemon/status` of the test's
 * choosing: what `rootsctl log --socket` meets when the socket the person names is not mcp-rootsd's
 * (a stale process, a fake one). Real socket, real JSON-RPC lines.
 */
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { PROTOCOL_VERSION } from '../../protocol/methods.js';
import { shortDir } from './short-dir.js';

/** Listen on a new socket; each `daemon/status` is answered with `status`. Closed at teardown. */
export async function fakeStatusDaemon(
  t: { teardown(fn: () => unknown): void },
  status: Record<string, unknown>,
): Promise<string> {
  const socket = join(shortDir(), 'd.sock');
  const server: Server = createServer((c) => {
    let buf = '';
    c.on('error', () => undefined);
    c.on('data', (d: Buffer) => {
      buf += d.toString();
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const m = JSON.parse(buf.slice(0, i)) as { id: number; method: string };
        buf = buf.slice(i + 1);
        const result =
          m.method === 'initialize'
            ? {
                protocolVersion: PROTOCOL_VERSION,
                serverInfo: { name: 'mcp-rootsd', version: '0' },
                capabilities: {},
              }
            : status;
        c.write(`${JSON.stringify({ jsonrpc: '2.0', id: m.id, result })}\n`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return socket;
}

/** A whole `daemon/status` as a real daemon sends it, with `fields` in place of its own. */
export function daemonStatus(fields: Record<string, unknown>): Record<string, unknown> {
  return {
    version: '0',
    pid: 1,
    uptimeSeconds: 1,
    socket: '/s',
    policy: { files: [], revision: 0, loadedAt: '', sha256: '', errors: [], warnings: [] },
    servers: [],
    clients: 1,
    subscriptions: 0,
    connections: [],
    lockdown: false,
    watches: { directories: 0, mode: 'events', degraded: [] },
    ...fields,
  };
}

/**
 * A `daemon/status` whose every text (names, paths, times, messages) is `text`: what a daemon,
 * or something posing as one, could make rootsctl print.
 */
export function statusSaying(text: string): Record<string, unknown> {
  return daemonStatus({
    version: text,
    socket: `/s${text}`,
    policy: {
      files: [`/p${text}.yaml`],
      revision: 1,
      loadedAt: text,
      sha256: '',
      errors: [{ file: `/p${text}`, line: 1, column: 1, message: text }],
      warnings: [{ file: `/p${text}`, line: 1, column: 1, message: text }],
    },
    servers: [{ name: text, roots: 1, readOnly: 0, nextExpiry: text }],
    connections: [{ client: text, subscriptions: [text] }],
    watches: { directories: 1, mode: text, degraded: [`/d${text}`] },
    nextExpiry: text,
  });
}
