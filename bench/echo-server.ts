/**
 * A bare line-JSON server over a Unix socket: the floor the daemon's latency is compared with.
 * It answers every request with the daemon's own result bytes and, on SIGUSR2, pushes a
 * `list_changed` of the same list to every connection that subscribed: the floor under the
 * daemon's push to many subscribers.
 */
import { readFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';

const [socketPath, payloadFile] = process.argv.slice(2) as [string, string];
// Answer with the same result bytes the daemon sends, so only the daemon's own work differs.
const payload = readFileSync(payloadFile, 'utf8');
const subscribed = new Set<Socket>();
let revision = 0;

const server = createServer((socket) => {
  let buf = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buf += chunk;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const msg = JSON.parse(line) as { id: unknown; params?: { subscribe?: boolean } };
      if (msg.params?.subscribe === true) subscribed.add(socket);
      socket.write(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${payload}}\n`);
    }
  });
  socket.on('close', () => subscribed.delete(socket));
  socket.on('error', () => socket.destroy());
});
server.listen(socketPath);

process.on('SIGUSR2', () => {
  // One buffer for every subscriber, as the daemon sends it.
  const line = Buffer.from(
    `{"jsonrpc":"2.0","method":"notifications/roots/list_changed","params":{"server":"bench","revision":${++revision},"roots":${JSON.stringify((JSON.parse(payload) as { roots: unknown }).roots)}}}\n`,
  );
  for (const socket of subscribed) socket.write(line);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
