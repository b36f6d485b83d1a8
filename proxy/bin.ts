/**
 * The `mcp-roots-proxy` executable: a stdio MCP server under the policy's roots. The build
 * (scripts/bundle.mjs) bundles it as CommonJS into `dist/proxy/mcp-roots-proxy.cjs`, the bin, and
 * links `dist/proxy/main.js` to it. The bin begins with lines for sh (common/extra-ca-certs.ts):
 * started as a program, Node starts without `NODE_EXTRA_CA_CERTS`, and the first thing done here
 * is to put it back, for the server and anything else the proxy starts.
 */
import { actedOnEscaped } from '../common/acted-on.js';
import { RootsError } from '../common/errors.js';
import { restoreExtraCaCerts } from '../common/extra-ca-certs.js';
import { closeInheritedDescriptors } from './inherited-fds.js';
import { packageVersion } from '../common/package-info.js';
import { HELP } from './help-text.js';
import { parseProxyArgs } from './options.js';
import { runProxy } from './run.js';
import { answerUsageError } from './usage-answer.js';

// Before anything that could start a program: the server sees the person's environment.
restoreExtraCaCerts();
// And gets stdin, stdout and stderr, not what the proxy's own starter left open.
const closedFds = closeInheritedDescriptors();

async function main(argv: string[]): Promise<number> {
  // Only as the first argument: after it, a -V could belong to the server's own command.
  if (argv[0] === '--version' || argv[0] === '-V') {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  let options;
  try {
    options = parseProxyArgs(argv);
  } catch (err) {
    if (err instanceof RootsError && err.code === 'USAGE') {
      process.stderr.write(`mcp-roots-proxy: ${err.message}\n`);
      // The host that started it hears why too: most show a server's answer, not its stderr.
      await answerUsageError(argv, err.message, packageVersion(), {
        stdin: process.stdin,
        stdout: process.stdout,
      });
      return 2;
    }
    throw err;
  }
  if (options === undefined) {
    process.stdout.write(HELP);
    return 0;
  }
  return runProxy(options, {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    closedFds,
  });
}

/**
 * Until what was written to `stream` has left the process, for at most `ms`: `process.exit` drops
 * what a pipe has not taken yet (the last answers to the host, a sandboxed server's last stderr).
 */
function drained(stream: NodeJS.WriteStream, ms: number): Promise<void> {
  if (stream.writableLength === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const done = (): void => {
      clearTimeout(timer);
      resolve();
    };
    stream.once('drain', done).once('close', done).once('error', done);
  });
}

/** How long the proxy's exit waits for its output to be taken. */
const EXIT_DRAIN_MS = 2000;

main(process.argv.slice(2)).then(
  async (status) => {
    await Promise.all([
      drained(process.stdout, EXIT_DRAIN_MS),
      drained(process.stderr, EXIT_DRAIN_MS),
    ]);
    process.exit(status);
  },
  (err: unknown) => {
    // An internal error only; its message may still quote a name from the host or the server,
    // and a host may show this stderr on a terminal (common/acted-on.ts).
    // The message on one line; the stack's frames (the code's own) after it, one a line.
    const head = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    const stack = err instanceof Error ? (err.stack ?? '') : '';
    const frames = stack.startsWith(head) ? stack.slice(head.length).split('\n').slice(1) : [];
    const lines = [head, ...frames].map(actedOnEscaped);
    process.stderr.write(`mcp-roots-proxy: ${lines.join('\n')}\n`);
    process.exit(1);
  },
);
