/** The `mcp-rootsd` executable: run the daemon in the foreground until SIGTERM or SIGINT. */
// First: V8 flags the daemon sets on itself, before the rest of the bundle is evaluated.
import './v8-flags.js';
import { commandOf } from '../common/command-line.js';
import { RootsError } from '../common/errors.js';
import { restoreExtraCaCerts } from '../common/extra-ca-certs.js';
import { packageVersion } from '../common/package-info.js';
import { Daemon } from './daemon.js';
import { makeLogger } from './logger.js';
import { DAEMON_USAGE, parseDaemonArgs } from './options.js';

// Node started without NODE_EXTRA_CA_CERTS (the bin's first lines): the environment is put back
// as the person had it, should the daemon ever start a program.
restoreExtraCaCerts();

async function run(): Promise<number> {
  const uid = process.getuid?.() ?? 0;
  let options;
  try {
    options = parseDaemonArgs(process.argv.slice(2), process.env, process.cwd(), uid);
  } catch (err) {
    // Named as the person can run it: from a clone that is `node dist/daemon/main.js`.
    const self = commandOf('mcp-rootsd', { env: process.env, cwd: process.cwd() });
    process.stderr.write(
      `mcp-rootsd: ${(err as Error).message}\nRun \`${self} --help\` for the options.\n`,
    );
    return 2;
  }
  if (options === 'help') {
    process.stdout.write(DAEMON_USAGE);
    return 0;
  }
  if (options === 'version') {
    process.stdout.write(`${packageVersion()}\n`);
    return 0;
  }
  const log = makeLogger({ level: options.logLevel, format: options.logFormat });
  let daemon: Daemon;
  try {
    daemon = await Daemon.start(options, { log, env: process.env, uid, pid: process.pid });
  } catch (err) {
    const message = err instanceof RootsError ? err.message : `cannot start: ${String(err)}`;
    log.error(message);
    await log.flush();
    return 1;
  }
  log.info(`ask it: ${daemon.statusCommand}`);
  let code = 0;
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      log.info(`${signal} received`);
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
    process.on('SIGHUP', () => {
      log.info('SIGHUP received: reloading the policy');
      void daemon.state.reload({ policy: true, grants: true, repin: true }, 'SIGHUP');
    });
    // The socket is gone and cannot be recreated: exit non-zero rather than serve on nothing.
    void daemon.guard.lost.then(() => {
      code = 1;
      resolve();
    });
  });
  await daemon.close();
  // Everything is closed, so the process ends by itself; if some handle still holds it, say so
  // and end anyway rather than linger as a daemon that no longer serves.
  setTimeout(() => {
    process.stderr.write('mcp-rootsd: still running 5 s after closing; exiting\n');
    process.exit(code);
  }, 5000).unref();
  return code;
}

// A daemon cannot afford a lost rejection: log it and keep serving.
process.on('unhandledRejection', (reason) => {
  process.stderr.write(`mcp-rootsd: unhandled rejection: ${String(reason)}\n`);
});

// No top-level await: the bundle is CommonJS (scripts/bundle.mjs). A throw that escapes run() ends
// the daemon with status 1, as an ES module's rejected top-level await did.
run().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(
      `mcp-rootsd: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
