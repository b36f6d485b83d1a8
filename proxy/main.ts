#!/usr/bin/env node
/** The `mcp-roots-proxy` executable: a stdio MCP server under the policy's roots. */
import { RootsError } from '../common/errors.js';
import { parseProxyArgs, USAGE } from './options.js';
import { runProxy } from './run.js';

async function main(argv: string[]): Promise<number> {
  let options;
  try {
    options = parseProxyArgs(argv);
  } catch (err) {
    if (err instanceof RootsError && err.code === 'USAGE') {
      process.stderr.write(`mcp-roots-proxy: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  if (options === undefined) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  return runProxy(options, {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
  });
}

main(process.argv.slice(2)).then(
  (status) => process.exit(status),
  (err: unknown) => {
    process.stderr.write(
      `mcp-roots-proxy: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
