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
  // Back-pressure: stop reading the side that feeds a stream which is not keeping up, until it
  // has room again or never will: a server stopped (a restart) with its input full closes
  // without a 'drain', and the host's next messages, for the server that replaced it, waited
  // for ever.
  if (!room && !source.isPaused()) {
    source.pause();
    const resume = (): void => {
      out.off('drain', resume).off('close', resume);
      source.resume();
    };
    out.on('drain', resume).on('close', resume);
  }
}
