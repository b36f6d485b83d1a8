/** Sequential request/answer round trips over a Unix socket, from its own process; prints timings as JSON. */
import { createConnection } from 'node:net';

const [socketPath, countText, warmupText] = process.argv.slice(2) as [string, string, string];
const count = Number(countText);
const warmup = Number(warmupText);

const socket = createConnection({ path: socketPath });
await new Promise<void>((resolve, reject) => {
  socket.once('connect', resolve);
  socket.once('error', reject);
});
let pending: ((line: string) => void) | undefined;
let buf = '';
socket.setEncoding('utf8');
socket.on('data', (chunk: string) => {
  buf += chunk;
  const i = buf.indexOf('\n');
  if (i >= 0 && pending) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    const p = pending;
    pending = undefined;
    p(line);
  }
});
const samples: number[] = [];
for (let n = 0; n < warmup + count; n++) {
  const req = `{"jsonrpc":"2.0","id":${n},"method":"roots/list","params":{"server":"bench"}}\n`;
  const t0 = process.hrtime.bigint();
  const answer = await new Promise<string>((resolve) => {
    pending = resolve;
    socket.write(req);
  });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (!answer.includes('"result"')) throw new Error(`bad answer: ${answer.slice(0, 200)}`);
  if (n >= warmup) samples.push(ms);
}
socket.destroy();
process.stdout.write(JSON.stringify(samples));
