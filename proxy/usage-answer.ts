/**
 * A proxy an MCP host started with a wrong command line. Hosts show what a server answers and
 * seldom its stderr (the Inspector says only "Connection closed"), so before the proxy exits the
 * host's first request is answered with the usage error too, by a refusing stand-in (stand-in.ts).
 * A person at a terminal has read the message on stderr already: nothing is waited for then.
 */
import type { Readable, Writable } from 'node:stream';
import { startStandIn } from './stand-in.js';

/** How long the host has to send its first request before the proxy exits anyway. */
export const USAGE_ANSWER_WAIT_MS = 5000;

/** The `--server` the command line names, as far as it can be read; for the message only. */
function serverNamed(argv: readonly string[]): string {
  const end = argv.includes('--') ? argv.indexOf('--') : argv.length;
  for (let i = 0; i < end; i++) {
    const arg = argv[i]!;
    if (arg.startsWith('--server=')) return arg.slice('--server='.length);
    if (arg === '--server' && i + 1 < end) return argv[i + 1]!;
  }
  return '(no --server)';
}

/**
 * Answer the host's first request on `stdin` with `problem`; resolves once answered, once the
 * input ends, or after `waitMs`.
 */
export async function answerUsageError(
  argv: readonly string[],
  problem: string,
  version: string,
  io: { stdin: Readable & { isTTY?: boolean }; stdout: Writable },
  waitMs = USAGE_ANSWER_WAIT_MS,
): Promise<void> {
  if (io.stdin.isTTY) return;
  const standIn = startStandIn(serverNamed(argv), version, {
    kind: 'refuse',
    reason: `the proxy's command line is wrong: ${problem}`,
  });
  let timer: NodeJS.Timeout | undefined;
  await new Promise<void>((resolve) => {
    timer = setTimeout(resolve, waitMs);
    // A host that closed its end of our stdout (EPIPE) would otherwise crash the proxy with a
    // stack trace and exit 1: the usage error's exit code is 2 whatever the host does.
    io.stdout.on('error', () => resolve());
    standIn.serverOut.once('data', (line: Buffer) => io.stdout.write(line, () => resolve()));
    io.stdin.once('end', resolve);
    io.stdin.once('error', resolve);
    io.stdin.pipe(standIn.serverIn);
  });
  clearTimeout(timer);
  io.stdin.unpipe(standIn.serverIn);
  io.stdin.destroy();
  standIn.close();
}
