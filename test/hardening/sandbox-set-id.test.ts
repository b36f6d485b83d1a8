/**
 * What a sandboxed server's system call filter refuses beyond reaching other processes
 * (common/seccomp-filter.ts), each **a hole found by an attacker pass**:
 *
 * - **Set-ID programs left on the host.** The sandbox's mounts are `nosuid`, which counts only
 *   inside: a file the server made `chmod 6755` (or created with that mode) kept its bits on the
 *   host, owned by the server's real uid, so another user who could reach the root and run it
 *   ran it as the person (as root, for a proxy run as root). Now a set-user-ID or set-group-ID
 *   bit is refused in every call that gives a mode; an ordinary mode, and the sticky bit, pass.
 * - **A new user namespace** (a finding of the next pass): with bubblewrap before 0.8, which cannot
 *   forbid one, a server made one and held every capability in it. Now clone and unshare with
 *   CLONE_NEWUSER are refused (clone3 answered ENOSYS, so that libc uses clone); threads and
 *   children still start.
 * - **AF_VSOCK with `network: false`.** Its ports are the machine's, not a network namespace's,
 *   so a server without a network listened on one (and could reach the hypervisor's services).
 *   Now only the network's families and netlink may be made.
 *
 * Real daemon, a real proxy under bubblewrap, the hostile fixture's shell, the system's Python.
 */
import { mkdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { startHostile } from '../helpers/proxied-server.js';
import { ownedShortDir } from '../helpers/proxy.js';

/** Python that tries each way of giving a file a mode, and prints what each came to. */
const MODES = `
import os, socket, sys
os.umask(0)
d = sys.argv[1]
def tried(what, f):
    try:
        f(); print(what, 'done')
    except OSError as e:
        print(what, 'refused:', e.strerror)
open(d + '/plain', 'w').close()
tried('chmod 4755', lambda: os.chmod(d + '/plain', 0o4755))
tried('chmod 2755', lambda: os.chmod(d + '/plain', 0o2755))
fd = os.open(d + '/plain', os.O_RDONLY)
tried('fchmod 6755', lambda: os.fchmod(fd, 0o6755))
tried('open 4755', lambda: os.close(os.open(d + '/by-open', os.O_CREAT | os.O_WRONLY, 0o4755)))
tried('mknod 4755', lambda: os.mknod(d + '/by-mknod', 0o104755))
tried('chmod 755', lambda: os.chmod(d + '/plain', 0o755))
tried('open 755', lambda: os.close(os.open(d + '/ok', os.O_CREAT | os.O_WRONLY, 0o755)))
os.mkdir(d + '/sticky')
tried('chmod 1777', lambda: os.chmod(d + '/sticky', 0o1777))
tried('vsock', lambda: socket.socket(socket.AF_VSOCK, socket.SOCK_STREAM))
tried('inet', lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
def unshare_user():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x10000000) != 0:
        e = ctypes.get_errno(); raise OSError(e, os.strerror(e))
tried('userns', unshare_user)
import threading, subprocess
t = threading.Thread(target=lambda: None); t.start(); t.join(); print('thread done')
print('fork', subprocess.run(['true']).returncode)
`;

void t.test('no set-ID mode and no vsock in the sandbox', async (t) => {
  const dir = ownedShortDir(t);
  const a = join(dir, 'a');
  mkdirSync(a);
  const policy = `version: 1\nservers:\n  a:\n    roots:\n      - path: ${a}\n    sandbox: {network: false}\n`;
  const d = await startDaemon(t, policy, { dir });
  const s = await startHostile(t, d.socket, { server: 'a' });
  writeFileSync(join(a, 'modes.py'), MODES);
  const out = (
    await s.call('attempt', {
      action: 'shell',
      ref: `cp /usr/bin/id ${a}/by-cp && chmod 6755 ${a}/by-cp; python3 ${a}/modes.py ${a}`,
    })
  ).text;
  for (const what of [
    'chmod 4755',
    'chmod 2755',
    'fchmod 6755',
    'open 4755',
    'mknod 4755',
    'vsock',
    'userns',
  ])
    t.match(out, `${what} refused: Operation not permitted`, `${what}: refused`);
  for (const what of ['chmod 755', 'open 755', 'chmod 1777', 'inet'])
    t.match(out, `${what} done`, `${what}: allowed`);
  t.match(out, 'thread done', 'a thread starts (clone3 refused, libc falls back to clone)');
  t.match(out, 'fork 0', 'and a child process');
  // What the host sees: no file of the server's has a set-ID bit.
  for (const f of ['by-cp', 'plain', 'by-open', 'by-mknod', 'ok']) {
    const mode = statSync(join(a, f), { throwIfNoEntry: false })?.mode ?? 0;
    t.equal(mode & 0o6000, 0, `${f}: no set-ID bit on the host (mode ${mode.toString(8)})`);
  }
  t.equal(statSync(join(a, 'plain')).mode & 0o7777, 0o755, 'the ordinary chmod took');
  t.equal(statSync(join(a, 'sticky')).mode & 0o7777, 0o1777, 'and the sticky bit');
});
