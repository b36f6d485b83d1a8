/** Open N subscribed connections in one process, then time how long one change takes to reach them all. */
import { createConnection, type Socket } from 'node:net';

const [socketPath, countText] = process.argv.slice(2) as [string, string];
const count = Number(countText);

const sockets: Socket[] = [];
const received: number[] = [];
let subscribed = 0;
let started = Infinity;
let onAll: (() => void) | undefined;

function open(): void {
  const s = createConnection({ path: socketPath });
  s.setEncoding('utf8');
  s.on('error', (err) => {
    process.stderr.write(`subscriber connection failed: ${err.message}\n`);
    process.exit(1);
  });
  let buf = '';
  s.on('data', (chunk: string) => {
    buf += chunk;
    for (let j = buf.indexOf('\n'); j >= 0; j = buf.indexOf('\n')) {
      const line = buf.slice(0, j);
      buf = buf.slice(j + 1);
      if (line.includes('"id"')) subscribed++;
      else if (line.includes('list_changed')) {
        received.push(performance.timeOrigin + performance.now() - started);
        if (received.length === count) onAll?.();
      }
    }
  });
  s.write(
    `{"jsonrpc":"2.0","id":1,"method":"roots/list","params":{"server":"bench","subscribe":true}}\n`,
  );
  sockets.push(s);
}

// Connect in batches: a burst larger than the listen backlog is refused with EAGAIN.
const BATCH = 200;
for (let i = 0; i < count; i += BATCH) {
  for (let j = i; j < Math.min(count, i + BATCH); j++) open();
  while (subscribed < Math.min(count, i + BATCH)) await new Promise((r) => setTimeout(r, 5));
}
while (subscribed < count) await new Promise((r) => setTimeout(r, 10));
process.stdout.write('ready\n');
// The parent writes the instant (ms since the epoch, fractional) at which it makes the change.
process.stdin.once('data', (chunk: Buffer) => {
  started = Number(chunk.toString().trim());
});
await new Promise<void>((resolve) => {
  onAll = resolve;
  setTimeout(resolve, 10_000).unref();
});
for (const s of sockets) s.destroy();
// stdin would keep this process alive: exit once the result is out.
process.stdout.write(`${JSON.stringify(received)}\n`, () => process.exit(0));
