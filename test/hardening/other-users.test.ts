/**
 * Other local users. The daemon runs as one throwaway user, the intruder is
 * another; the only boundary is the socket directory's 0700 (Node cannot read SO_PEERCRED), and the
 * state directory's 0700.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t, { type Test } from 'tap';
import { RootsClient } from '../../protocol/client.js';
import { bin } from '../helpers/bin.js';
import { waitFor } from '../helpers/poll.js';
import { lockName } from '../../protocol/socket-path.js';
import {
  asUser,
  createUser,
  nodeAs,
  runAs,
  spawnDaemonAs,
  type TestUser,
} from '../helpers/users.js';

/** A policy, a root and the daemon's arguments, all under `user`'s private directory. */
function setup(user: TestUser, socket = join(user.home, 'run', 'rootsd.sock')) {
  const h = user.home;
  mkdirSync(join(h, 'project'), { recursive: true });
  writeFileSync(
    join(h, 'mcp-roots.yaml'),
    `version: 1\nservers:\n  fs:\n    roots:\n      - path: ${h}/project\n`,
  );
  chownSync(join(h, 'project'), user.uid, user.gid);
  chownSync(join(h, 'mcp-roots.yaml'), user.uid, user.gid);
  const stateDir = join(h, 'state');
  return {
    socket,
    stateDir,
    args: ['--config', join(h, 'mcp-roots.yaml'), '--socket', socket, '--state-dir', stateDir],
  };
}

/** A script that connects to a socket and prints the errno code, or "connected". */
const connectScript = (socket: string) => `
import { createConnection } from 'node:net';
const s = createConnection({ path: ${JSON.stringify(socket)} });
s.on('connect', () => { console.log('connected'); s.destroy(); });
s.on('error', (e) => console.log(e.code));
`;

void t.test('another user cannot reach the daemon or its state', async (t) => {
  const owner = createUser(t);
  const intruder = createUser(t);
  const { socket, stateDir, args } = setup(owner);
  const daemon = await spawnDaemonAs(owner, args, t);
  t.match(daemon.output(), /listening on/);

  // The owner can: the same script, run as the owner, connects.
  t.equal(nodeAs(owner, connectScript(socket)).stdout.trim(), 'connected', 'the owner connects');
  const c = await RootsClient.connect({ socket, uid: owner.uid });
  t.teardown(() => c.close());
  await c.grant('fs', join(owner.home, 'project'), { seconds: 600 });
  t.ok(existsSync(join(stateDir, 'grants.yaml')), 'a grants file exists');

  const tries = nodeAs(intruder, connectScript(socket));
  t.equal(tries.stdout.trim(), 'EACCES', 'another user gets EACCES connecting to the socket');

  // Even knowing the path exactly, and with rootsctl: it checks the directory before connecting.
  const ctl = runAs(intruder, process.execPath, [
    bin('rootsctl'),
    '--socket',
    socket,
    'list',
    'fs',
  ]);
  t.not(ctl.status, 0, 'rootsctl as another user fails');
  t.match(ctl.stderr, /EACCES|not running|unsafe|permission/i, `it says why: ${ctl.stderr.trim()}`);

  for (const [what, path] of [
    ['the grants file', join(stateDir, 'grants.yaml')],
    ['the state directory', stateDir],
    ['the socket directory', join(owner.home, 'run')],
    ['the policy file', join(owner.home, 'mcp-roots.yaml')],
  ] as const) {
    const r = runAs(intruder, 'cat', [path]);
    t.not(r.status, 0, `another user cannot read ${what}`);
    t.match(r.stderr, /Permission denied/, `${what}: Permission denied`);
  }
  // Even with the home directory opened up, the daemon's own directories stay private.
  chmodSync(owner.home, 0o755);
  t.equal(
    nodeAs(intruder, connectScript(socket)).stdout.trim(),
    'EACCES',
    'the socket dir is 0700',
  );
  for (const path of [join(stateDir, 'grants.yaml'), join(owner.home, 'run', 'rootsd.sock')]) {
    const r = runAs(intruder, 'cat', [path]);
    t.match(r.stderr, /Permission denied/, `${path}: still Permission denied`);
  }
  chmodSync(owner.home, 0o700);
  t.equal(daemon.child.exitCode, null, 'the daemon is unaffected');
  t.equal(await daemon.stop(), 0);
});

void t.test('a socket directory owned by someone else', async (t) => {
  const owner = createUser(t);
  const intruder = createUser(t);
  // A shared sticky directory, like /tmp, where /tmp/mcp-roots-<uid> would live.
  const shared = mkdtempSync(join(tmpdir(), 'mrs-'));
  t.teardown(() => rmSync(shared, { recursive: true, force: true }));
  chmodSync(shared, 0o1777);
  const sockDir = join(shared, `mcp-roots-${owner.uid}`);
  const { socket, args } = setup(owner, join(sockDir, 'rootsd.sock'));

  await t.test('planted before start: the daemon refuses to start', async (t) => {
    t.equal(runAs(intruder, 'mkdir', ['-m', '0700', sockDir]).status, 0, 'the intruder plants it');
    const daemon = await spawnDaemonAs(owner, args, t);
    t.equal(await daemon.exited, 1, 'the daemon exits 1');
    t.match(
      daemon.output(),
      new RegExp(`socket directory ${sockDir} is unsafe: it is owned by uid ${intruder.uid}`),
      'naming the directory and its owner',
    );
    t.notOk(existsSync(socket), 'and listens on nothing');
    // Clients refuse too: a fake daemon there must not be believed.
    const ctl = runAs(owner, process.execPath, [bin('rootsctl'), '--socket', socket, 'status']);
    t.not(ctl.status, 0, 'rootsctl refuses to connect');
    t.match(ctl.stderr, /unsafe: it is owned by uid/, 'saying why');
    await t.rejects(RootsClient.connect({ socket, uid: owner.uid }), { code: 'SOCKET_DIR_UNSAFE' });
    rmSync(sockDir, { recursive: true });
  });

  await t.test('world-writable: refused too', async (t) => {
    mkdirSync(sockDir, { mode: 0o777 });
    chmodSync(sockDir, 0o777);
    chownSync(sockDir, owner.uid, owner.gid);
    const daemon = await spawnDaemonAs(owner, args, t);
    t.equal(await daemon.exited, 1);
    t.match(daemon.output(), /mode is 0777, writable by group or others/);
    rmSync(sockDir, { recursive: true });
  });

  await t.test('planted while running: the daemon exits loudly', async (t) => {
    const daemon = await spawnDaemonAs(owner, args, t);
    t.match(daemon.output(), /listening on/);
    // A tmp cleaner removes the directory and another user is quicker than the daemon to
    // recreate it (made beforehand and renamed into place, so the test does not race the daemon).
    const planted = join(shared, 'planted');
    t.equal(runAs(intruder, 'mkdir', ['-m', '0777', planted]).status, 0, 'the intruder prepares');
    // The daemon reacts to the removal at once; stopped meanwhile, it sees both changes when it resumes.
    daemon.child.kill('SIGSTOP');
    const swap = spawnSync('bash', ['-c', `rm -rf '${sockDir}' && mv '${planted}' '${sockDir}'`]);
    daemon.child.kill('SIGCONT');
    t.equal(swap.status, 0, 'the directory is swapped for the intruder’s');
    t.equal(await daemon.exited, 1, 'the daemon exits 1 instead of serving on nothing');
    t.match(daemon.output(), /disappeared/, 'it noticed');
    t.match(daemon.output(), new RegExp(`owned by uid ${intruder.uid}`), 'and says why it stopped');
    rmSync(sockDir, { recursive: true });
  });
});

void t.test('a state directory or grants file someone else can write', async (t) => {
  // `--state-dir` under a shared sticky directory: another user can make it first, with a
  // grants file of theirs in it, which is policy.
  const owner = createUser(t);
  const intruder = createUser(t);
  const shared = mkdtempSync(join(tmpdir(), 'mrs-'));
  t.teardown(() => rmSync(shared, { recursive: true, force: true }));
  chmodSync(shared, 0o1777);
  const { args: base, socket } = setup(owner);
  const stateDir = join(shared, 'state');
  const args = [...base.slice(0, -1), stateDir];
  const grants = join(stateDir, 'grants.yaml');
  const planted =
    'version: 1\nservers:\n  fs:\n    roots:\n      - path: /etc\n        expires: "2099-01-01T00:00:00Z"\n';
  const refuses = async (t: Test, what: RegExp) => {
    const daemon = await spawnDaemonAs(owner, args, t);
    t.equal(await daemon.exited, 1, 'the daemon exits 1');
    t.match(daemon.output(), what, 'naming what is unsafe and why');
    t.notMatch(daemon.output(), /listening on/, 'and serves nothing');
  };

  await t.test('made by the intruder first', async (t) => {
    t.equal(runAs(intruder, 'mkdir', ['-m', '0755', stateDir]).status, 0);
    await refuses(
      t,
      new RegExp(`state directory ${stateDir} is unsafe: it is owned by uid ${intruder.uid}`),
    );
    rmSync(stateDir, { recursive: true });
  });

  await t.test('writable by others, or holding a grants file of theirs', async (t) => {
    mkdirSync(stateDir, { mode: 0o777 });
    chmodSync(stateDir, 0o777);
    chownSync(stateDir, owner.uid, owner.gid);
    await refuses(t, /state directory .* mode is 0777, writable by group or others/);
    chmodSync(stateDir, 0o700);
    writeFileSync(grants, planted);
    chownSync(grants, intruder.uid, intruder.gid);
    await refuses(
      t,
      new RegExp(`grants file ${grants} is unsafe: it is owned by uid ${intruder.uid}`),
    );
    chownSync(grants, owner.uid, owner.gid);
    chmodSync(grants, 0o666);
    await refuses(t, /grants file .* mode is 0666, writable by group or others/);
    chmodSync(grants, 0o600);
    const daemon = await spawnDaemonAs(owner, args, t);
    t.match(daemon.output(), /listening on/, "the owner's own file, mode 0600: served");
    await daemon.stop();
  });

  await t.test('in a directory the intruder can rename entries of', async (t) => {
    // Renamed away while the daemon ran, and the intruder's own put in its place, grants and
    // all: the daemon loaded them. Such a parent is refused at the start.
    const theirs = join(shared, 'theirs');
    t.equal(runAs(intruder, 'mkdir', ['-m', '0777', theirs]).status, 0);
    const inside = join(theirs, 'state');
    mkdirSync(inside, { mode: 0o700 });
    chownSync(inside, owner.uid, owner.gid);
    const daemon = await spawnDaemonAs(owner, [...base.slice(0, -1), inside], t);
    t.equal(await daemon.exited, 1, 'the daemon exits 1');
    t.match(
      daemon.output(),
      new RegExp(
        `state directory ${inside} is unsafe: ${theirs}, a directory above it, is owned by uid ${intruder.uid}`,
      ),
    );
    chownSync(theirs, owner.uid, owner.gid);
    const open = await spawnDaemonAs(owner, [...base.slice(0, -1), inside], t);
    t.equal(await open.exited, 1, 'world-writable without the sticky bit: refused too');
    t.match(open.output(), /has mode 0777: others may write it, and it has no sticky bit/);
    chmodSync(theirs, 0o1777);
    const sticky = await spawnDaemonAs(owner, [...base.slice(0, -1), inside], t);
    t.match(sticky.output(), /listening on/, 'sticky, as /tmp: only an entry’s owner renames it');
    await sticky.stop();
  });

  await t.test('below a directory its group, not the owner’s alone, may write', async (t) => {
    // The intruder's group may rename entries there as the intruder may: the state directory is
    // refused as it is in a directory of theirs. The owner's own private group is the owner.
    const group = join(shared, 'group');
    const inside = join(group, 'state');
    mkdirSync(inside, { recursive: true, mode: 0o700 });
    chownSync(inside, owner.uid, owner.gid);
    chownSync(group, 0, intruder.gid);
    chmodSync(group, 0o2775);
    const daemon = await spawnDaemonAs(owner, [...base.slice(0, -1), inside], t);
    t.equal(await daemon.exited, 1, 'the daemon exits 1');
    t.match(
      daemon.output(),
      `${group}, a directory above it, has mode 2775: group ${intruder.gid}, which is not yours alone, may write it`,
    );
    chownSync(group, owner.uid, owner.gid);
    const own = await spawnDaemonAs(owner, [...base.slice(0, -1), inside], t);
    t.match(own.output(), /listening on/, 'writable by the owner’s private group: served');
    await own.stop();
    // A second group name with the owner's gid (groupadd -o) and the intruder in it: the gid is
    // shared after all.
    const alias = `mra${intruder.name.slice(-8)}`;
    t.equal(spawnSync('groupadd', ['-o', '-g', String(owner.gid), alias]).status, 0);
    // -f: the gid is the owner's primary group's, which groupdel otherwise will not remove.
    t.teardown(() => {
      const r = spawnSync('groupdel', ['-f', alias], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`groupdel -f ${alias} failed: ${r.stderr}`);
    });
    t.equal(spawnSync('usermod', ['-aG', alias, intruder.name]).status, 0);
    const aliased = await spawnDaemonAs(owner, [...base.slice(0, -1), inside], t);
    t.equal(await aliased.exited, 1, 'a gid another group name shares with the intruder: refused');
    t.match(aliased.output(), /which is not yours alone, may write it/);
  });

  await t.test('reached through a link of theirs, re-pointed while it runs', async (t) => {
    // `--state-dir` goes through a link in a directory of the intruder's: at the start it leads
    // to the owner's home; the intruder then points it at a directory of their own, grants and all.
    const real = join(owner.home, 'real-state');
    mkdirSync(real, { mode: 0o700 });
    chownSync(real, owner.uid, owner.gid);
    const theirs = join(shared, 'links');
    t.equal(runAs(intruder, 'mkdir', ['-m', '0755', theirs]).status, 0);
    const via = join(theirs, 'home');
    t.equal(runAs(intruder, 'ln', ['-s', owner.home, via]).status, 0);
    const evil = join(theirs, 'evil');
    t.equal(runAs(intruder, 'mkdir', ['-p', '-m', '0700', join(evil, 'real-state')]).status, 0);
    const plantedFile = join(evil, 'real-state', 'grants.yaml');
    t.equal(nodeAs(intruder, writeScript(plantedFile, planted)).status, 0);
    const daemon = await spawnDaemonAs(owner, [...base.slice(0, -1), join(via, 'real-state')], t);
    t.match(daemon.output(), /listening on/);
    const c = await RootsClient.connect({ socket, uid: owner.uid });
    t.teardown(() => c.close());
    await c.grant('fs', join(owner.home, 'project'), { seconds: 600, readOnly: true });
    t.equal(runAs(intruder, 'ln', ['-sfn', evil, via]).status, 0);
    await c.reload();
    const roots = (await c.listRoots('fs')).roots.map((r) => r.uri);
    t.notOk(roots.includes('file:///etc'), "the intruder's grants are never served");
    t.same(roots, [pathToFileURL(join(owner.home, 'project')).href], 'the policy’s root, no more');
    await c.grant('fs', join(owner.home, 'project'), { seconds: 60 });
    t.equal(readFileSync(plantedFile, 'utf8'), planted, 'nothing is written in theirs');
    t.match(
      readFileSync(join(real, 'grants.yaml'), 'utf8'),
      'project',
      'but where it led at the start',
    );
    t.equal(
      (await c.status()).decisionLog,
      join(real, 'decisions.jsonl'),
      'the decision log is named where it is',
    );
    await daemon.stop();
  });

  await t.test('removed while it runs, and made again by the intruder', async (t) => {
    // In a sticky directory only its owner (or a cleaner running as root) removes it; once gone,
    // anyone may make one of that name.
    const stateDir = join(shared, 'gone');
    mkdirSync(stateDir, { mode: 0o700 });
    chownSync(stateDir, owner.uid, owner.gid);
    const daemon = await spawnDaemonAs(owner, [...base.slice(0, -1), stateDir], t);
    t.match(daemon.output(), /listening on/);
    const c = await RootsClient.connect({ socket, uid: owner.uid });
    t.teardown(() => c.close());
    await c.grant('fs', join(owner.home, 'project'), { seconds: 600, readOnly: true });
    // The grant's record open, so that its first write does not make the directory again.
    await waitFor(() => existsSync(join(stateDir, 'decisions.jsonl')), 30_000, 'the decision log');
    rmSync(stateDir, { recursive: true });
    t.equal(runAs(intruder, 'mkdir', ['-m', '0777', stateDir]).status, 0);
    t.equal(nodeAs(intruder, writeScript(join(stateDir, 'grants.yaml'), planted)).status, 0);
    t.equal((await c.reload()).ok, false, 'the reload reports an error');
    const roots = (await c.listRoots('fs')).roots.map((r) => r.uri);
    t.notOk(roots.includes('file:///etc'), "the intruder's grants are never served");
    const status = await c.status();
    t.match(
      status.policy.errors.map((e) => e.message).join('\n'),
      // Or, where the file system keeps no birth time and the inode number was reused, its owner.
      new RegExp(
        `the state directory ${stateDir} (is not the one the daemon started on \\(it was replaced\\)|is unsafe: it is owned by uid ${intruder.uid})`,
      ),
    );
    await t.rejects(
      c.grant('fs', join(owner.home, 'project'), { seconds: 60 }),
      { code: 'STATE_DIR_UNSAFE' },
      'no grant is written into their directory',
    );
    t.notOk(
      readFileSync(join(stateDir, 'grants.yaml'), 'utf8').includes('project'),
      'their file is left as it was',
    );
    t.match(
      await c.lockdown(true),
      {
        lockdown: true,
        notice: new RegExp(
          `^lockdown is on, but cannot be saved in ${stateDir}/lockdown \\(the state directory ${stateDir} (is not|is unsafe)[^]*\\): a restart would end it$`,
        ),
      },
      'lockdown still takes effect, and says it cannot be saved',
    );
    t.same((await c.listRoots('fs')).roots, []);
    t.notOk(existsSync(join(stateDir, 'lockdown')), 'but is not written into their directory');
    await t.rejects(
      c.lockdown(false),
      { code: 'STATE_DIR_UNSAFE', message: /^lockdown stays on: the state directory / },
      'an unlock is refused until the daemon is restarted',
    );
    t.equal((await c.status()).lockdown, true, 'and lockdown stays on');
    await daemon.stop();
  });
});

void t.test('another user cannot block the daemon by taking its lock name first', async (t) => {
  const owner = createUser(t);
  const intruder = createUser(t);
  const { socket, args } = setup(owner);
  // The lock is an abstract socket, which anyone may bind. Without the token from the 0700
  // socket directory, the only name an intruder can compute is the token-less one.
  const guess = lockName(socket, owner.uid);
  const [cmd, argv] = asUser(intruder, process.execPath, [
    '--input-type=module',
    '-e',
    `import { createServer } from 'node:net'; createServer().listen(${JSON.stringify(guess)}, () => console.log('bound'));`,
  ]);
  const squatter = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  // Stopped with the user's own processes, before `userdel`, which refuses a user still running
  // one (a kill not waited for raced it).
  const exited = new Promise((resolve) => squatter.once('exit', resolve));
  intruder.running.add({
    kill: async () => {
      squatter.kill('SIGKILL');
      await exited;
    },
  });
  await new Promise<void>((resolve) => squatter.stdout.once('data', () => resolve()));
  const daemon = await spawnDaemonAs(owner, args, t);
  t.match(daemon.output(), /listening on/, 'the daemon starts anyway');
  t.equal(daemon.child.exitCode, null);
});

/** A script that writes `text` to `file`, to be run as another user. */
function writeScript(file: string, text: string): string {
  return `import { writeFileSync } from 'node:fs'; writeFileSync(${JSON.stringify(file)}, ${JSON.stringify(text)});`;
}
