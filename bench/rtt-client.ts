/**
 * roots/list round trips over Unix sockets, from its own process. Given several sockets it
 * alternates between them request by request, so that each sees the same scheduling and cache
 * conditions; prints one array of timings (ms) per socket as JSON.
 */
import { createConnection, type Socket } from 'node:net';

const args = process.argv.slice(2);
const warmup = Number(args.pop());
const count = Number(args.pop());
const paths = args;

interface Conn {
  socket: Socket;
  buf: string;
  pending: ((line: string) => void) | undefined;
}

async function open(path: string): Promise<Conn> {
  const socket = createConnection({ path });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const conn: Conn = { socket, buf: '', pending: undefined };
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    conn.buf += chunk;
    const i = conn.buf.indexOf('\n');
    if (i >= 0 && conn.pending) {
      const line = conn.buf.slice(0, i);
      conn.buf = conn.buf.slice(i + 1);
      const p = conn.pending;
      conn.pending = undefined;
      p(line);
    }
  });
  return conn;
}

const conns = await Promise.all(paths.map(open));
const samples: number[][] = paths.map(() => []);
for (let n = 0; n < warmup + count; n++) {
  for (let k = 0; k < conns.length; k++) {
    const conn = conns[k]!;
    const req = `{"jsonrpc":"2.0","id":${n},"method":"roots/list","params":{"server":"bench"}}\n`;
    const t0 = process.hrtime.bigint();
    const answer = await new Promise<string>((resolve) => {
      conn.pending = resolve;
      conn.socket.write(req);
    });
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (!answer.includes('"result"')) throw new Error(`bad answer: ${answer.slice(0, 200)}`);
    if (n >= warmup) samples[k]!.push(ms);
  }
}
for (const c of conns) c.socket.destroy();
process.stdout.write(JSON.stringify(samples));
