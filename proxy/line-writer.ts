/** Writing one MCP line to a stream, with back-pressure on the stream that feeds it. */
import type { Readable, Writable } from 'node:stream';

const NL = Buffer.from('\n');

/** Write `data` and a newline to `out` (unless it is closed); pause `source` while `out` is full. */
export function writeLine(out: Writable, data: Buffer | string, source: Readable): void {
  if (out.destroyed || out.writableEnded) return;
  // The line and its newline in one system call (writev), not two: each write to a pipe wakes
  // the reader, and on a busy machine every wake-up is what a relayed call pays for.
  out.cork();
  out.write(data);
  const room = out.write(NL);
  out.uncork();
  // Back-pressure: stop reading the side that feeds a stream which is not keeping up.
  if (!room && !source.isPaused()) {
    source.pause();
    out.once('drain', () => source.resume());
  }
}
