/** Runs `rootsctl` with this process's arguments, streams and environment; resolves to the exit code. */
import { commandOf } from '../common/command-line.js';
import { main } from './run.js';

export function start(): Promise<number> {
  const interrupted = () =>
    new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
  return main(process.argv.slice(2), {
    out: (text) => process.stdout.write(text),
    err: (text) => process.stderr.write(text),
    env: process.env,
    cwd: process.cwd(),
    isTTY: process.stdout.isTTY === true,
    interrupted,
    command: (bin) => commandOf(bin, { env: process.env, cwd: process.cwd() }),
  });
}
