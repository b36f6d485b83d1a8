/** A bare line-JSON server over a Unix socket: the floor the daemon's latency is compared with. */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

const [socketPath, payloadFile] = process.argv.slice(2) as [string, string];
// Answer with the same result bytes the daemon sends, so only the daemon's own work differs.
const payload = readFileSync(payloadFile, 'utf8');

const server = createServer((socket) => {
  let buf = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    buf += chunk;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const msg = JSON.parse(line) as { id: unknown };
      socket.write(`{"jsonrpc":"2.0","id":${JSON.stringify(msg.id)},"result":${payload}}\n`);
    }
  });
  socket.on('error', () => socket.destroy());
});
server.listen(socketPath);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
