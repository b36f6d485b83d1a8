#!/usr/bin/env node
/** The `rootsctl` executable. */
import { commandOf } from '../common/command-line.js';
import { main } from './run.js';

const interrupted = () =>
  new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
process.exitCode = await main(process.argv.slice(2), {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  env: process.env,
  cwd: process.cwd(),
  isTTY: process.stdout.isTTY === true,
  interrupted,
  command: (bin) => commandOf(bin, { env: process.env, cwd: process.cwd() }),
});
