/**
 * The daemon's bin as npm installs it: a link in `node_modules/.bin` to the package's
 * `dist/daemon/mcp-rootsd.cjs`, whose first lines are for sh (common/launcher.ts; rootsctl's test
 * covers their quoting in depth). Run as a program, Node must start without NODE_EXTRA_CA_CERTS
 * (Node 20 would parse the certificates and keep them for the daemon's life) in the process that
 * was started, which then serves; arguments and exit codes are the daemon's own. The installed
 * systemd unit, which starts Node on the bin directly, unsets the variable (test/cli/service).
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { CARRIER } from '../../common/extra-ca-certs.js';
import { RootsClient } from '../../protocol/client.js';
import { REPO } from '../helpers/bin.js';
import { waitFor } from '../helpers/poll.js';
import { shortDir } from '../helpers/short-dir.js';

const BIN = (
  JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { bin: Record<string, string> }
).bin['mcp-rootsd']!;

/** A project whose node_modules holds this repository with npm's relative link to the bin. */
function installed(t: Test) {
  const dir = realpathSync(t.testdir({ project: { node_modules: { '.bin': {} } } }));
  symlinkSync(REPO, join(dir, 'project', 'node_modules', 'mcp-roots'));
  const link = join(dir, 'project', 'node_modules', '.bin', 'mcp-rootsd');
  symlinkSync(join('..', 'mcp-roots', BIN), link);
  return { dir, link };
}

void t.test('started as a program, Node starts without the variable and serves', async (t) => {
  const { dir, link } = installed(t);
  const run = shortDir();
  const socket = join(run, 's.sock');
  const config = join(dir, 'policy.yaml');
  writeFileSync(config, 'version: 1\n');
  const child = spawn(
    link,
    ['--config', config, '--socket', socket, '--state-dir', join(run, 'state')],
    {
      env: { PATH: process.env.PATH!, HOME: dir, NODE_EXTRA_CA_CERTS: '/etc/ssl/extra.pem' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  t.teardown(() => child.kill('SIGKILL'));
  await waitFor(() => existsSync(socket), 30_000, 'the daemon listens');
  // sh execs Node in the same process: its command line becomes Node's, and the environment
  // /proc keeps from that exec is the one Node started with.
  const argv = readFileSync(`/proc/${child.pid!}/cmdline`, 'utf8').split('\0');
  const environ = readFileSync(`/proc/${child.pid!}/environ`, 'utf8').split('\0');
  t.same(argv.slice(0, 3), ['node', '--', link]);
  t.notOk(
    environ.some((v) => v.startsWith('NODE_EXTRA_CA_CERTS=')),
    'not for Node itself',
  );
  t.ok(environ.includes(`${CARRIER}=/etc/ssl/extra.pem`), 'carried for the daemon to put back');
  const client = await RootsClient.connect({ socket });
  const status = await client.status();
  t.equal(status.pid, child.pid, 'the process that was started serves');
  t.same(status.policy.errors, [], 'its policy loaded');
  await client.close();
  child.kill('SIGTERM');
  t.equal(await exited, 0, `SIGTERM reaches the daemon, which stops cleanly: ${stderr}`);
});

void t.test("arguments and exit codes are the daemon's own", (t) => {
  const { dir, link } = installed(t);
  const env = { PATH: process.env.PATH!, HOME: dir };
  const version = spawnSync(link, ['--version'], { env, encoding: 'utf8' });
  t.equal(version.status, 0);
  t.match(version.stdout, /^\d+\.\d+\.\d+/);
  const wrong = spawnSync(link, ['--no-such option'], { env, encoding: 'utf8' });
  t.equal(wrong.status, 2);
  t.match(wrong.stderr, /no-such option/, 'the argument as given, space and all');
  t.end();
});
