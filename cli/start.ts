/** Runs `rootsctl` with this process's arguments, streams and environment; resolves to the exit code. */
import { commandOf } from '../common/command-line.js';
import { main } from './run.js';

export function start(): Promise<number> {
  // The reader went away (`rootsctl … | head`): what is left to print is dropped, and the
  // command still finishes what it does (install-service writes its units either way).
  let readerGone = false;
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    readerGone = true;
  });
  const interrupted = () =>
    new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
  return main(process.argv.slice(2), {
    out: (text) => readerGone || process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    isTTY: process.stdout.isTTY === true,
    interrupted,
    command: (bin) => commandOf(bin, { env: process.env, cwd: process.cwd() }),
  });
}
