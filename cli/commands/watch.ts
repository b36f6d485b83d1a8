/**
 * `rootsctl watch SERVER`: print the roots now and at each change until interrupted. When the
 * daemon goes away (a restart) it follows SERVER again on the same reconnecting link the proxy uses.
 */
import { RootsError } from '../../common/errors.js';
import { homeDir } from '../../common/locations.js';
import type { RootsClient } from '../../protocol/client.js';
import type { ListChangedParams } from '../../protocol/methods.js';
import { Reconnector } from '../../protocol/reconnect.js';
import { connect } from '../connect.js';
import { daemonServerNames } from '../backend.js';
import { localTime, noEntryLine, rootsTable } from '../format.js';
import { EXIT, type ExitCode, type Io } from '../io.js';
import { daemonStateNotes, showNote } from '../state-notes.js';
import { inLine } from '../terminal-text.js';
import type { Options } from '../options.js';

/** Waits between attempts to reach a restarted daemon: 100 ms, doubling, at most 2 s. */
const WATCH_BACKOFF = { min: 100, max: 2000 };

type Shown = Pick<ListChangedParams, 'server' | 'revision' | 'roots'>;

/** Only a daemon that is not there (yet) is worth waiting for; a foreign socket directory is not. */
function retryable(err: unknown): boolean {
  return err instanceof RootsError && (err.code === 'DAEMON_UNREACHABLE' || err.code === 'TIMEOUT');
}

export async function watch(io: Io, [server]: string[], opts: Options): Promise<ExitCode> {
  const json = opts.json ?? false;
  const home = homeDir(io.env);
  // Local time, as every other table and line of rootsctl shows it (a user pass).
  const stamp = () => `[${localTime(new Date().toISOString())}]`;
  // An empty list may be lockdown's: ask, and print in the order the lists came.
  let printed = Promise.resolve();
  const print = (client: RootsClient, p: Shown): void => {
    const lockdown =
      p.roots.length === 0
        ? daemonStateNotes(io, client, opts.socket).catch(() => '')
        : Promise.resolve('');
    printed = printed.then(async () => {
      const note = await lockdown;
      if (json) {
        io.out(`${JSON.stringify(p)}\n`);
        showNote(io, json, note);
      } else
        io.out(
          `${stamp()} revision ${inLine(p.revision)}\n${note}${rootsTable(server!, p.roots, home, Date.now())}`,
        );
    });
  };
  // The first connection is made here, so that "not running" is exit 3 at once, not a wait.
  const first = await connect(io, opts.socket);
  // A name nothing in the policy covers is most likely a typo: said once, then followed anyway.
  try {
    const named = await first.explain(server!);
    if (named.coveredBy === undefined && named.declared === false)
      io.err(`rootsctl: ${noEntryLine(server!, await daemonServerNames(first))}`);
  } catch (err) {
    await first.close();
    throw err;
  }
  const link = new Reconnector({
    connect: () => connect(io, opts.socket),
    backoffMs: WATCH_BACKOFF,
    retryable,
  });
  let restarted = false;
  try {
    return await new Promise<ExitCode>((resolve, rejectWith) => {
      const reject = (err: unknown) =>
        rejectWith(err instanceof Error ? err : new Error(String(err)));
      const follow = async (client: RootsClient) => {
        client.on('list_changed', (p) => {
          if (p.server === server) print(client, p);
        });
        try {
          const list = await client.listRoots(server!, { subscribe: true });
          link.resetBackoff();
          if (restarted && !json)
            io.out(`${stamp()} mcp-rootsd restarted; following ${inLine(server!)} again\n`);
          print(client, {
            server: server!,
            revision: list._meta['mcp-roots/revision'],
            roots: list.roots,
          });
        } catch (err) {
          // The daemon went away again before answering: the link reconnects. Anything else ends watch.
          if (!client.closed) reject(err);
        }
      };
      link.on('connected', (client) => void follow(client));
      link.on('disconnected', (_client, reason) => {
        restarted = true;
        if (!json) io.err(`rootsctl: lost mcp-rootsd (${inLine(reason)}); reconnecting\n`);
      });
      link.on('gaveUp', reject);
      void (io.interrupted?.() ?? new Promise<never>(() => {})).then(() => resolve(EXIT.ok));
      link.start(first);
    });
  } finally {
    await link.close();
  }
}
