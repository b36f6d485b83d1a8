/**
 * Server B's side of `stall.ts`, in a process of its own as a real server's would be: it
 * subscribes to B's list and follows its pushes (each tens of thousands of roots, which take this
 * process tens of ms to read), so that reading them does not delay A's checks in the bench's own
 * event loop. Prints `first <roots> <ms>` once subscribed; then, told `want <roots>` on stdin,
 * waits until B's list holds that many (at most 120 s) and prints `done <pushes> <roots>`.
 */
import { RootsClient } from '../protocol/client.js';
import type { ListChangedParams } from '../protocol/methods.js';

const [socket] = process.argv.slice(2) as [string];
const client = await RootsClient.connect({
  socket,
  env: process.env,
  clientInfo: { name: 'server-b', version: '0' },
});
const startAt = performance.now();
// The first answer waits for the start-up resolution, however long it takes.
const first = await client.request(
  'roots/list',
  { server: 'b', subscribe: true },
  { timeoutMs: 600_000 },
);
let pushes = 0;
let last = first.roots.length;
client.on('list_changed', (p: ListChangedParams) => {
  pushes++;
  last = p.roots.length;
});
process.stdout.write(`first ${last} ${Math.round(performance.now() - startAt)}\n`);

const want = await new Promise<number>((resolve) => {
  let input = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk: string) => {
    input += chunk;
    const m = /want (\d+)\n/.exec(input);
    if (m) resolve(Number(m[1]));
  });
});
const deadline = performance.now() + 120_000;
while (last < want && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
await client.close();
process.stdout.write(`done ${pushes} ${last}\n`, () => process.exit(0));
