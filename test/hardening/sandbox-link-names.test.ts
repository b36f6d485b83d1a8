/**
 * Where the sandbox makes the links on the way to a program (proxy/program-links.ts). bwrap makes
 * each while it sets the sandbox up, resolving its name in the sandbox's `/proc` and `/dev`, whose
 * magic links lead out of it. An attacker pass: a server that may write its root, whose program
 * lies there, replaced its script (in an earlier session) by a link to
 * `/proc/self/cwd/oldroot/<anywhere>`. For the proxy, started by the host in the project, that
 * led to a file the server also left in its root, so a link was asked for at that name; for
 * bwrap, `oldroot` was the host's root, and a link (with the directories above it) appeared on
 * the host at `<anywhere>`, outside every root: `~/.config/autostart`, a repository's hooks.
 * Now no link is made in `/proc`, `/dev` or `/sys`, and a link lying where the server may write
 * names no place for one.
 */
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import t from 'tap';
import { programLinks } from '../../proxy/program-links.js';
import { startDaemon } from '../helpers/daemon.js';
import { HOSTILE_SERVER, proxiedTransport } from '../helpers/proxied-server.js';
import { ownedShortDir, real, waitFor } from '../helpers/proxy.js';

/** A root whose script the server replaced by a link through `/proc/self/cwd` to `victim`. */
function plant(root: string, victim: string): string {
  const planted = join(root, 'oldroot', victim);
  mkdirSync(join(planted, '..'), { recursive: true });
  writeFileSync(planted, readFileSync(HOSTILE_SERVER));
  chmodSync(planted, 0o755);
  mkdirSync(join(root, 'app'), { recursive: true });
  symlinkSync(join('/proc/self/cwd/oldroot', victim), join(root, 'app/server.mjs'));
  return join(root, 'app/server.mjs');
}

void t.test('a link through /proc/self/cwd makes nothing on the host', async (t) => {
  const dir = ownedShortDir(t);
  const root = join(dir, 'root');
  const outside = join(dir, 'not-the-servers');
  mkdirSync(outside, { recursive: true });
  const victim = join(outside, 'made/by-bwrap');
  const script = plant(root, victim);
  const policy = `version: 1\nservers:\n  s:\n    roots: [{path: ${root}}]\n`;
  const d = await startDaemon(t, policy, { dir });
  // The host starts the proxy in the project, as Claude Code does (the transport starts it on
  // connect, so the working directory is put back once the start is over).
  const before = process.cwd();
  process.chdir(root);
  t.teardown(() => process.chdir(before));
  const { transport, stderr } = proxiedTransport({
    server: 's',
    socket: d.socket,
    proxyArgs: ['--sandbox'],
    command: [process.execPath, script],
  });
  const client = new Client({ name: 'test-host', version: '0' });
  t.teardown(() => client.close());
  // The start is over once the server answers, or the proxy says it ended or was not started.
  void client.connect(transport).catch(() => undefined);
  let answered = false;
  void client.listTools().then(
    () => (answered = true),
    () => undefined,
  );
  await waitFor(
    () => answered || /exited|not started|could not/.test(stderr()),
    30_000,
    'the start is over',
  );
  process.chdir(before);
  t.notOk(existsSync(join(outside, 'made')), `nothing made on the host at ${victim}`);
});

void t.test('the names no link is made at', async (t) => {
  const dir = real(ownedShortDir(t));
  const root = join(dir, 'root');
  const script = plant(root, join(dir, 'elsewhere/x'));
  const before = process.cwd();
  process.chdir(root);
  t.teardown(() => process.chdir(before));
  t.same(await programLinks([script], [root], [root]), [], 'none past a link the server may write');
  t.same(
    await programLinks([join('/proc/self/cwd/oldroot', dir, 'elsewhere/x')], [root], []),
    [],
    'none in /proc, however it leads',
  );
  process.chdir(before);
});
