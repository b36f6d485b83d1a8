/**
 * A sandboxed server's root that expires while the daemon cannot say so. The daemon takes an
 * expired root out of the server's list and the proxy restarts the server without its mount; but
 * with the daemon gone (a crash, an upgrade, a stop) or stuck when the grant expired, nobody told
 * the proxy, and the server read the granted directory on its own for as long as it ran (**was
 * a hole**, found by an attacker pass). A second pass: a write grant of a directory the policy
 * gives read-only stayed writable the same way. The proxy now ends a root, or its writing, by its
 * own clock (proxy/root-expiry.ts). Real daemon process, real proxy, real bwrap; the server's
 * reads and writes are its own system calls (`--no-enforce`: only the kernel answers).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { RootsClient } from '../../protocol/client.js';
import { startHostile } from '../helpers/proxied-server.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';
import { spawnDaemon } from '../helpers/spawn-daemon.js';

/**
 * How long the root lives: long enough for the server to restart with it and read it first on a
 * loaded machine (a wait, not CPU).
 */
const LIFETIME_MS = 10_000;

/**
 * A daemon process on a policy giving the sandboxed `h` the root `keep`, a proxy on hostile.mjs,
 * a way to read `g/secret.txt` as the server, and one to write the policy again with `extra`.
 */
async function setup(t: Test) {
  const dir = ownedShortDir(t);
  const [keep, g] = [join(dir, 'keep'), join(dir, 'g')];
  mkdirSync(keep);
  mkdirSync(g);
  writeFileSync(join(g, 'secret.txt'), 'granted');
  const config = join(dir, 'policy.yaml');
  const policy = (extra = '') =>
    writeFileSync(
      config,
      `version: 1\nservers:\n  h:\n    sandbox: true\n    roots:\n      - path: ${keep}\n${extra}`,
    );
  policy();
  const socket = join(dir, 'run', 'rootsd.sock');
  const daemon = await spawnDaemon(
    ['--config', config, '--socket', socket, '--state-dir', join(dir, 'state')],
    { socket, t },
  );
  const h = await startHostile(t, socket);
  const attempt = async (action: string, ref: string) => {
    try {
      return (await h.call('attempt', { action, ref })).text;
    } catch (err) {
      return `the call failed: ${(err as Error).message}`;
    }
  };
  const read = () => attempt('read', join(g, 'secret.txt'));
  /** Until `read` gives the file: the root, added, is mounted once the server has restarted. */
  const mounted = () =>
    waitFor(async () => (await read()) === 'ok: granted', 30_000, 'the root is mounted');
  return { g, socket, daemon, h, attempt, read, mounted, policy };
}

/** Wait past `expires` (ms since the epoch), then for the proxy's restart to have ended. */
async function pastExpiry(h: { stderr(): string }, expires: number) {
  await new Promise((r) => setTimeout(r, Math.max(0, expires - Date.now())));
  // The log comes in pieces: wait for the restart's last line, not its first.
  const restarted =
    /restarting the server: .*a root or grant it was given expired[^]*restarted the server \(ms:/;
  await waitFor(() => restarted.test(h.stderr()), 30_000, 'the proxy restarted at the expiry');
}

void t.test('a grant that expires while the daemon is gone', async (t) => {
  const { g, socket, daemon, h, read, mounted } = await setup(t);
  const admin = await RootsClient.connect({ socket });
  const { grant } = await admin.grant('h', g, { seconds: LIFETIME_MS / 1000 });
  await admin.close();
  await mounted();

  daemon.child.kill('SIGKILL');
  await daemon.exited;
  t.equal(await read(), 'ok: granted', 'until it expires, the last answer holds');
  await pastExpiry(h, Date.parse(grant.expires));
  t.match(h.stderr(), 'the change takes access away: stopping the old server at once');
  t.notMatch(await read(), /ok: granted/, 'the server reads nothing of the grant');
});

void t.test('a policy root that expires while the daemon is stuck', async (t) => {
  const { g, daemon, h, read, mounted, policy } = await setup(t);
  const expires = Date.now() + LIFETIME_MS;
  policy(`      - path: ${g}\n        expires: ${new Date(expires).toISOString()}\n`);
  await mounted();

  // Stopped, not gone: the proxy's connection stays up, and no list comes.
  daemon.child.kill('SIGSTOP');
  t.teardown(() => daemon.child.kill('SIGCONT'));
  await pastExpiry(h, expires);
  t.match(h.stderr(), 'the change takes access away: stopping the old server at once');
  t.match(await read(), /^ENOENT: /, 'the new instance has no such mount');
});

void t.test(
  'a write grant of a read-only root that expires while the daemon is stuck',
  async (t) => {
    const { g, socket, daemon, h, attempt, read, policy } = await setup(t);
    policy(`      - path: ${g}\n        readOnly: true\n`);
    const write = (name: string) => attempt('write', join(g, name));
    await waitFor(async () => /^EROFS/.test(await write('before')), 30_000, 'mounted read-only');
    const admin = await RootsClient.connect({ socket });
    const { grant } = await admin.grant('h', g, { seconds: LIFETIME_MS / 1000 });
    await admin.close();
    await waitFor(async () => (await write('granted')) === 'ok: written', 30_000, 'writable');

    // Stuck: the list the proxy holds still says writable, with when that ends.
    daemon.child.kill('SIGSTOP');
    t.teardown(() => daemon.child.kill('SIGCONT'));
    await pastExpiry(h, Date.parse(grant.expires));
    t.match(h.stderr(), 'the change takes access away: stopping the old server at once');
    t.match(await write('after'), /^EROFS/, 'mounted read-only again');
    t.equal(await read(), 'ok: granted', 'and still readable');
  },
);
