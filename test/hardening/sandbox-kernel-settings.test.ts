/**
 * A sandboxed server cannot change the machine's kernel settings. Run by root (containers, CI, dev
 * containers), bwrap maps the server's uid 0 to real root, and the kernel lets real root write
 * /proc/sys by file mode alone, whatever capabilities were dropped: an attacker pass wrote
 * `kernel.core_pattern` as `|<a script in its writable root>`, crashed a child, and the kernel ran
 * the script as root outside the sandbox (it read ~/.ssh). /proc/sys, the SysRq trigger and
 * /proc/fs are now bound read-only over the sandbox's /proc (proxy/sandbox.ts PROC_READ_ONLY).
 *
 * The probe opens a setting for reading and writing and closes it without writing a byte
 * (`exec 3<>`, no truncation), so that a failure of this test changes nothing on the machine.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { startHostile } from '../helpers/proxied-server.js';
import { ownedShortDir } from '../helpers/proxy.js';

void t.test('the kernel settings are read-only in the sandbox', async (t) => {
  const dir = ownedShortDir(t);
  const work = join(dir, 'work');
  mkdirSync(work);
  const d = await startDaemon(
    t,
    `version: 1\nservers:\n  h:\n    sandbox: true\n    roots:\n      - path: ${work}\n`,
    { dir },
  );
  const h = await startHostile(t, d.socket);
  const shell = async (cmd: string) =>
    (await h.call('attempt', { action: 'shell', ref: cmd })).text;

  const mounts = await shell('cat /proc/self/mountinfo');
  for (const p of ['/proc/sys', '/proc/sysrq-trigger', '/proc/fs'].filter((p) => existsSync(p))) {
    t.match(
      mounts,
      new RegExp(`^\\d+ \\d+ \\S+ \\S+ ${p} ro[, ]`, 'm'),
      `${p} is mounted read-only`,
    );
  }
  const settings = ['/proc/sys/kernel/core_pattern', '/proc/sys/kernel/modprobe'];
  for (const setting of settings.filter((p) => existsSync(p))) {
    const opened = await shell(`(exec 3<>${setting}) 2>&1; echo "opened: $?"`);
    t.notMatch(opened, /opened: 0/, `${setting} cannot be opened for writing`);
    // Root is stopped by the mount itself; anyone else by the file's mode first.
    const why = process.getuid?.() === 0 ? /Read-only file system/ : /Permission denied|Read-only/;
    t.match(opened, why, `${setting}: ${opened.trim()}`);
  }
});
