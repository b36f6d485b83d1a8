/**
 * A hostile server under `--sandbox --no-enforce` gets the kernel's error for every attempt out of
 * its roots; the same attempts without `--sandbox` succeed, so no case passes vacuously.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { failingBwrap } from '../helpers/failing-bwrap.js';
import { HOSTILE_SERVER, proxiedTransport, startProxied } from '../helpers/proxied-server.js';
import { ownedShortDir } from '../helpers/proxy.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';

/** A home with a secret, two roots with a denied directory and file, and a file outside. */
function makeWorld(dir: string) {
  const home = join(dir, 'home');
  const w = join(dir, 'w');
  for (const d of [`${home}/.ssh`, `${w}/rw/secret`, `${w}/ro`, `${w}/outside`]) {
    mkdirSync(d, { recursive: true });
  }
  writeFileSync(`${home}/.ssh/id_ed25519`, 'PRIVATE KEY');
  writeFileSync(`${w}/rw/a.txt`, 'in the writable root');
  writeFileSync(`${w}/rw/secret/key.txt`, 'denied directory content');
  writeFileSync(`${w}/rw/.env`, 'TOKEN=denied file content');
  writeFileSync(`${w}/ro/r.txt`, 'in the read-only root');
  writeFileSync(`${w}/outside/o.txt`, 'outside every root');
  const policy = `version: 1
servers:
  h:
    roots:
      - path: ${w}/rw
      - path: ${w}/ro
        readOnly: true
    deny:
      - ${w}/rw/secret
      - "**/.env"
  by-policy:
    sandbox: true
    roots:
      - path: ${w}/rw
`;
  return { home, w, policy };
}

/** Python (the system's, which .ci/run installs) calling the keyring system calls directly. */
const KEYRING_PROBE = `import ctypes, os, platform
nr = {'x86_64': (248, 249, 250), 'aarch64': (217, 218, 219), 'riscv64': (217, 218, 219)}[platform.machine()]
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def said(v): return 'ok' if v >= 0 else os.strerror(ctypes.get_errno())
print('keyctl: ' + said(libc.syscall(nr[2], 0, -4, 0)))  # KEYCTL_GET_KEYRING_ID of @u
print('add_key: ' + said(libc.syscall(nr[0], b'user', b'mcp-roots-probe', b'x', 1, -2)))  # into @p
print('request_key: ' + said(libc.syscall(nr[1], b'user', b'mcp-roots-probe', None, -2)))
`;

void t.test('the sandbox stops what the argument check cannot see', async (t) => {
  const dir = ownedShortDir(t);
  const { home, w, policy } = makeWorld(dir);
  const d = await startDaemon(t, policy, { dir });
  const start = (sandbox: boolean) =>
    startProxied(t, {
      server: 'h',
      socket: d.socket,
      proxyArgs: ['--no-enforce', ...(sandbox ? ['--sandbox'] : [])],
      command: [process.execPath, HOSTILE_SERVER],
      env: { HOME: home },
    });
  const [boxed, open] = await Promise.all([start(true), start(false)]);

  // [what, action, ref, the kernel's error inside the sandbox]
  const escapes: [string, string, string, string][] = [
    ['read a file named by a non-path argument', 'read', `${w}/outside/o.txt`, 'ENOENT'],
    ['list $HOME', 'list', home, 'ENOENT'],
    ['read a key in $HOME', 'read', `${home}/.ssh/id_ed25519`, 'ENOENT'],
    // Refused before its path is looked up (no Unix sockets); with them, it is not there either
    // (sandbox-unix-sockets.test.ts).
    ['connect to the daemon’s socket', 'connect', d.socket, 'EPERM'],
    ['write into the read-only root', 'write', `${w}/ro/r.txt`, 'EROFS'],
    ['create a file in the read-only root', 'write', `${w}/ro/new.txt`, 'EROFS'],
    ['read a file in a denied directory', 'read', `${w}/rw/secret/key.txt`, 'ENOENT'],
    ['list a denied directory', 'list', `${w}/rw/secret`, ''],
    ['write into a denied directory', 'write', `${w}/rw/secret/new.txt`, 'EROFS'],
    ['read a denied file (**/.env)', 'read', `${w}/rw/.env`, 'EACCES'],
    ['overwrite a denied file', 'write', `${w}/rw/.env`, 'EACCES'],
  ];
  for (const [what, action, ref, code] of escapes) {
    const inside = await boxed.call('attempt', { action, ref });
    if (code === '') {
      // An empty directory is the kernel's answer for a hidden one: nothing to list.
      t.same(inside, { text: 'ok: ', isError: false }, `sandboxed: ${what} shows nothing`);
    } else {
      t.equal(inside.isError, true, `sandboxed: ${what} fails`);
      t.match(inside.text, new RegExp(`^${code}: `), `sandboxed: ${what} gets ${code}`);
    }
    if (action === 'write') continue;
    const outside = await open.call('attempt', { action, ref });
    t.match(outside, { isError: false, text: /^ok: ./ }, `unsandboxed: ${what} succeeds`);
  }
  // The writes last, so the reads above saw the files as they were.
  for (const [what, action, ref] of escapes.filter((e) => e[1] === 'write')) {
    const outside = await open.call('attempt', { action, ref });
    t.same(outside, { text: 'ok: written', isError: false }, `unsandboxed: ${what} succeeds`);
  }

  // The kernel's keyrings are in no namespace bwrap makes: a key is judged by its owner's uid,
  // so a server could read the person's keys by serial, or plant its own where their programs
  // look. The system calls are refused (common/seccomp-filter.ts).
  writeFileSync(`${w}/rw/keys.py`, KEYRING_PROBE);
  const keys = (s: typeof boxed) =>
    s.call('attempt', { action: 'shell', ref: `/usr/bin/python3 ${w}/rw/keys.py` });
  const keysInside = (await keys(boxed)).text;
  for (const call of ['keyctl', 'add_key', 'request_key'])
    t.match(keysInside, `${call}: Operation not permitted`, `sandboxed: ${call} is refused`);
  t.match((await keys(open)).text, 'keyctl: ok', 'unsandboxed: keyctl answers');

  // Outside its writable mounts and /tmp nothing can be made: a server that keeps its data in
  // the home (which is not there: the test's is in /tmp) is told so, rather than writing into
  // a layer that vanishes with it.
  for (const [what, action, ref] of [
    ['make a home directory', 'mkdir', '/home'],
    ['write a file at the top', 'write', '/data.jsonl'],
  ]) {
    const inside = await boxed.call('attempt', { action: action!, ref: ref! });
    t.equal(inside.isError, true, `sandboxed: ${what} fails`);
    t.match(inside.text, /^EROFS: /, `sandboxed: ${what} gets EROFS, never a lost success`);
  }
  t.same(
    await boxed.call('attempt', { action: 'write', ref: '/tmp/scratch.txt' }),
    { text: 'ok: written', isError: false },
    'its private /tmp stays writable',
  );

  // The roots still work in the sandbox: it is not simply broken.
  t.same(await boxed.call('attempt', { action: 'read', ref: `${w}/rw/a.txt` }), {
    text: 'ok: in the writable root',
    isError: false,
  });
  t.same(await boxed.call('attempt', { action: 'write', ref: `${w}/rw/b.txt` }), {
    text: 'ok: written',
    isError: false,
  });
  t.match(await boxed.call('attempt', { action: 'read', ref: `${w}/ro/r.txt` }), {
    isError: false,
  });
  t.match(await boxed.call('attempt', { action: 'list', ref: `${w}/rw` }), {
    text: /^ok: .*a\.txt/,
  });
  t.match(boxed.stderr(), /starting the server in its sandbox/);
});

void t.test('sandbox: true in the policy sandboxes the server without --sandbox', async (t) => {
  const dir = ownedShortDir(t);
  const { home, policy } = makeWorld(dir);
  const d = await startDaemon(t, policy, { dir });
  // --no-enforce: only the kernel stands between the server and the home here.
  const s = await startProxied(t, {
    server: 'by-policy',
    socket: d.socket,
    command: [process.execPath, HOSTILE_SERVER],
    env: { HOME: home },
    proxyArgs: ['--no-enforce'],
  });
  t.match(await s.call('attempt', { action: 'list', ref: home }), {
    isError: true,
    text: /^ENOENT: /,
  });
  t.match(s.stderr(), /starting the server in its sandbox/);
});

/** A directory `name` in `dir` holding a `bwrap` that answers --help, then fails with `error`. */
void t.test('no working sandbox: the host is told why, and nothing starts', async (t) => {
  const dir = ownedShortDir(t);
  const { home, w, policy } = makeWorld(dir);
  const d = await startDaemon(t, policy, { dir });
  // A bwrap that fails as Ubuntu's AppArmor restriction makes it fail, and one that fails as a
  // kernel without seccomp filters does (the sandbox needs its filter): faults not produced here.
  const fake = failingBwrap('setting up uid map: Permission denied', dir);
  const noFilter = failingBwrap(
    'Unable to set up system call filtering as requested: prctl(PR_SET_SECCOMP) reported EINVAL.',
    dir,
  );
  const cases: [string, string, RegExp][] = [
    [
      'bwrap missing',
      join(dir, 'empty-path'),
      /bubblewrap \(bwrap\) is not on PATH.*apt-get install bubblewrap/,
    ],
    [
      'user namespaces refused',
      fake,
      /AppArmor.*bwrap-userns-restrict.*apparmor_restrict_unprivileged_userns/,
    ],
    ['seccomp refused', noFilter, /system call filtering.*CONFIG_SECCOMP_FILTER/],
  ];
  for (const [what, path, advice] of cases) {
    const marker = join(w, `started-${what.replace(/\W/g, '-')}`);
    const { transport, stderr } = proxiedTransport({
      server: 'h',
      socket: d.socket,
      proxyArgs: ['--sandbox'],
      command: [process.execPath, HOSTILE_SERVER, `--mark=${marker}`],
      env: { HOME: home, PATH: path },
    });
    const client = new Client({ name: 'test-host', version: '0' });
    t.teardown(() => client.close());
    const err = await client.connect(transport).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    t.ok(err, `${what}: the host's initialize fails`);
    t.match(err?.message, advice, `${what}: the host is told why and how to fix it`);
    t.match(err?.message, /not started unsandboxed/, `${what}: and that nothing ran`);
    t.match(stderr(), advice, `${what}: the log says the same`);
    t.notOk(existsSync(marker), `${what}: the server never ran`);
  }
});
