/**
 * The proxy's bin as a host starts it: a link in `node_modules/.bin` to the package's
 * `dist/proxy/mcp-roots-proxy.cjs`, whose first lines are for sh (common/launcher.ts), as
 * rootsctl's are (test/cli/bin-launcher.test.ts tests those lines' quoting and signals in depth).
 * Run as a program it must behave as `#!/usr/bin/env node` did: every argument reaches the proxy
 * and the server as given, the exit code is the proxy's own, and the process the host started
 * becomes Node. Node starts without NODE_EXTRA_CA_CERTS, and the server sees it exactly as the
 * host had it: unset, empty or set (a server started through `npx` needs the person's
 * certificates).
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CARRIER } from '../../common/extra-ca-certs.js';
import { REPO } from '../helpers/bin.js';
import { startDaemon } from '../helpers/daemon.js';
import { waitFor } from '../helpers/poll.js';

const BIN = (
  JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { bin: Record<string, string> }
).bin['mcp-roots-proxy']!;

/**
 * A server that writes what it was started with (each variable set or not, its value, then its
 * arguments) to the file `$SEEN` names, and then reads its input until the proxy closes it. Its
 * output stays open (fd 3) meanwhile: the proxy ends its session when the server's output closes,
 * and the test looks at the proxy's process while the session runs.
 */
const SERVER = `#!/bin/sh
{
  printf '%s\\n' "\${NODE_EXTRA_CA_CERTS+set}" "\${NODE_EXTRA_CA_CERTS-}"
  printf '%s\\n' "\${${CARRIER}+set}" "\${${CARRIER}-}"
  printf '%s\\0' "$@"
} > "$SEEN.tmp"
mv "$SEEN.tmp" "$SEEN"
exec cat 3>&1 > /dev/null
`;

/** A project whose node_modules holds this repository with npm's relative link to the bin. */
async function installed(t: Test) {
  const dir = realpathSync(
    t.testdir({ 'my project': { node_modules: { '.bin': {} } }, home: {}, srv: {} }),
  );
  const project = join(dir, 'my project');
  symlinkSync(REPO, join(project, 'node_modules', 'mcp-roots'));
  const link = join(project, 'node_modules', '.bin', 'mcp-roots-proxy');
  symlinkSync(join('..', 'mcp-roots', BIN), link);
  const server = join(dir, 'srv', 'server');
  writeFileSync(server, SERVER, { mode: 0o755 });
  const d = await startDaemon(t, `version: 1\nservers:\n  fs:\n    roots: [{path: ${dir}/home}]\n`);
  const env: Record<string, string> = { HOME: join(dir, 'home'), PATH: process.env.PATH! };
  let sessions = 0;

  /**
   * Start the proxy through the link with `vars` added to `env`, wait for its server to have
   * written what it saw, look at the proxy's process, then close its input and wait for it to end.
   */
  async function session(vars: Record<string, string>, serverArgs: string[] = []) {
    const seenFile = join(dir, 'srv', `seen-${++sessions}`);
    writeFileSync(seenFile, '');
    const child = spawn(
      link,
      ['--server', 'fs', '--socket', d.socket, '--', server, ...serverArgs],
      {
        cwd: dir,
        env: { ...env, ...vars, SEEN: seenFile },
        stdio: ['pipe', 'ignore', 'pipe'],
      },
    );
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    const pid = child.pid!;
    await waitFor(() => readFileSync(seenFile, 'utf8') !== '', 30_000, 'the server started');
    const proxyEnviron = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    const proxyArgv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    child.stdin.end();
    const code = await exited;
    t.equal(code, 0, `the proxy ends when its host does: ${stderr}`);
    const [caSet, ca, carrierSet, , ...rest] = readFileSync(seenFile, 'utf8').split('\n');
    return {
      server: { ca: caSet === 'set' ? ca : undefined, carrier: carrierSet === 'set' },
      serverArgs: rest.join('\n').split('\0').slice(0, -1),
      proxyEnviron,
      proxyArgv,
    };
  }
  const run = (args: string[]) => {
    const r = spawnSync(link, args, { cwd: dir, env, encoding: 'utf8' });
    if (r.error) throw r.error;
    return { code: r.status, out: r.stdout, err: r.stderr };
  };
  return { session, run, link };
}

void t.test('the server sees NODE_EXTRA_CA_CERTS as the host had it', async (t) => {
  const { session } = await installed(t);
  const value = '/etc/ssl/some certs/extra.pem';
  // The carrier is mcp-roots' own name: one in the host's environment is never taken for the
  // person's certificates.
  const [unset, empty, set, stray] = await Promise.all([
    session({}),
    session({ NODE_EXTRA_CA_CERTS: '' }),
    session({ NODE_EXTRA_CA_CERTS: value }),
    session({ [CARRIER]: '/planted.pem' }),
  ]);
  t.same(unset.server, { ca: undefined, carrier: false }, 'unset stays unset');
  t.same(empty.server, { ca: '', carrier: false }, 'empty stays empty');
  t.same(set.server, { ca: value, carrier: false }, 'set');
  t.same(stray.server, { ca: undefined, carrier: false }, 'a stray carrier');
});

void t.test('Node starts without it, in the process the host started', async (t) => {
  const { session, link } = await installed(t);
  const seen = await session({ NODE_EXTRA_CA_CERTS: '/etc/ssl/extra.pem' });
  // sh execs Node in the same process: its command line becomes Node's, and the environment
  // /proc keeps from that exec is the one Node started with.
  t.same(seen.proxyArgv.slice(0, 3), ['node', '--', link]);
  t.notOk(
    seen.proxyEnviron.some((v) => v.startsWith('NODE_EXTRA_CA_CERTS=')),
    'not for Node itself',
  );
  t.ok(seen.proxyEnviron.includes(`${CARRIER}=/etc/ssl/extra.pem`), 'carried');
});

void t.test(
  "every argument reaches the server as given; the exit code is the proxy's",
  async (t) => {
    const { session, run } = await installed(t);
    // Spaces, quotes, glob characters, a variable, a command substitution, a backslash, a newline,
    // an empty argument: nothing is split, expanded or run on the way.
    const odd = [`a  b 'c' "d"`, '*?[x]', '$HOME', '`id`', '\\ e\nf', ''];
    t.same((await session({}, odd)).serverArgs, odd);
    const version = run(['--version']);
    t.equal(version.code, 0);
    t.match(version.out, /^\d+\.\d+\.\d+/);
    const usage = run(['--no-such-option']);
    t.equal(usage.code, 2);
    t.match(usage.err, /mcp-roots-proxy: /);
  },
);
