/**
 * The V8 flags the daemon sets on itself (`daemon/v8-flags.ts`) are set in the running daemon
 * however it is started: as `node <bin>` (the unit `rootsctl install-service` writes, `npm start`),
 * as the executable itself (npm's `mcp-rootsd` link, through its shebang) and under socket
 * activation. A preload passed in NODE_OPTIONS records every `v8.setFlagsFromString` call of the
 * process; the daemon's pid comes from `daemon/status`, so the record is the serving process's.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { DAEMON_V8_FLAGS } from '../../daemon/v8-flags.js';
import { RootsClient } from '../../protocol/client.js';
import { bin } from '../helpers/bin.js';
import { waitFor } from '../helpers/poll.js';
import { shortDir } from '../helpers/short-dir.js';

/**
 * The preload: appends `{pid, flags, daemonCodeRan}` for each call. `daemonCodeRan`: whether
 * daemon/bin.ts's own top level (which adds an `unhandledRejection` listener) had run by then.
 */
const SPY = `'use strict';
const v8 = require('node:v8');
const { appendFileSync } = require('node:fs');
const set = v8.setFlagsFromString;
v8.setFlagsFromString = (flags) => {
  appendFileSync(process.env.V8_FLAGS_SPY_OUT, JSON.stringify({
    pid: process.pid,
    flags,
    daemonCodeRan: process.listenerCount('unhandledRejection') > 0,
  }) + '\\n');
  return set(flags);
};
`;

interface Call {
  pid: number;
  flags: string;
  daemonCodeRan: boolean;
}

void t.test(
  'every flag the daemon sets is one this V8 knows (an unknown one is ignored silently)',
  (t) => {
    const known = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    for (const flag of DAEMON_V8_FLAGS) {
      const name = flag.replace(/^--(no-)?/, '').replace(/=.*$/, '');
      t.match(
        known,
        new RegExp(`^\\s+--${name} `, 'm'),
        `${name} is a V8 flag of ${process.version}`,
      );
    }
    t.end();
  },
);

const STARTS: { name: string; command: (daemonArgs: string[], socket: string) => string[] }[] = [
  { name: 'node <bin>', command: (args) => [process.execPath, bin('daemon'), ...args] },
  { name: 'the bin itself (shebang)', command: (args) => [bin('daemon'), ...args] },
  {
    name: 'socket activation',
    command: (args, socket) => [
      'systemd-socket-activate',
      '--listen',
      socket,
      '-E',
      'NODE_OPTIONS',
      '-E',
      'V8_FLAGS_SPY_OUT',
      '-E',
      'HOME',
      process.execPath,
      bin('daemon'),
      ...args,
    ],
  },
];

for (const start of STARTS) {
  void t.test(`started as ${start.name}, the daemon sets its V8 flags first`, async (t) => {
    const dir = shortDir();
    const config = join(dir, 'mcp-roots.yaml');
    mkdirSync(join(dir, 'project'));
    writeFileSync(config, `version: 1\nservers:\n  fs:\n    roots:\n      - ${dir}/project\n`);
    writeFileSync(join(dir, 'spy.cjs'), SPY);
    const out = join(dir, 'calls.jsonl');
    const socket = join(dir, 'rootsd.sock');
    const args = ['--config', config, '--socket', socket, '--state-dir', join(dir, 'state')];
    const [command, ...rest] = start.command(args, socket);
    const child: ChildProcess = spawn(command!, rest, {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...process.env,
        HOME: dir,
        NODE_OPTIONS: `--require ${join(dir, 'spy.cjs')}`,
        V8_FLAGS_SPY_OUT: out,
      },
    });
    let stderr = '';
    child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    t.teardown(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    });
    // Ready: the daemon's "listening on", or systemd-socket-activate's "Listening on ... as 3."
    // (it owns the socket; the first connection starts the daemon).
    await waitFor(() => /listening on/i.test(stderr), 60_000, 'a listening socket');
    const client = await RootsClient.connect({ socket, env: { ...process.env, HOME: dir } });
    const status = await client.status();
    await client.close();
    const calls = readFileSync(out, 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Call);
    const daemons = calls.filter((c) => c.pid === status.pid);
    t.same(
      daemons.map((c) => c.flags),
      DAEMON_V8_FLAGS,
      'the serving process set each flag, once',
    );
    t.notOk(
      daemons.some((c) => c.daemonCodeRan),
      "before daemon/bin.ts's own code ran",
    );
    child.kill('SIGTERM');
    await exited;
  });
}
