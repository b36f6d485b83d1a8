/**
 * Descriptors the proxy was started with beyond stdin, stdout and stderr, which every program it
 * starts would inherit. A host, a shell or a launcher may leave one open by mistake (any
 * descriptor without close-on-exec outlives `exec`). In a sandbox such a descriptor is a door the
 * mounts do not cover: one open on a directory outside the roots gives the server that directory,
 * and `..` from it the whole filesystem (`/proc/self/fd/N/../..`), whatever bwrap mounted.
 *
 * Node opens every descriptor of its own close-on-exec, so one without that flag came from
 * outside: the proxy needs none of them, and closes them before it starts anything. The sandbox's
 * gate checks the result from inside (sandbox-gate.ts), so a descriptor this misses stops the
 * server's start instead of reaching it.
 */
import { closeSync, readdirSync, readFileSync } from 'node:fs';

/** `O_CLOEXEC` as `/proc/PID/fdinfo` prints it, in octal: the same on every Linux architecture. */
const O_CLOEXEC = 0o2000000;

/** Close every descriptor above 2 that a started program would inherit; returns their numbers. */
export function closeInheritedDescriptors(): number[] {
  let names: string[];
  try {
    names = readdirSync('/proc/self/fd');
  } catch {
    // No /proc: nothing to list here, and the sandbox (which needs /proc) does not start.
    return [];
  }
  const closed: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd <= 2) continue;
    let info: string;
    try {
      info = readFileSync(`/proc/self/fdinfo/${fd}`, 'latin1');
    } catch {
      continue; // the listing's own descriptor, closed once read
    }
    const flags = /^flags:\s*([0-7]+)$/m.exec(info);
    if (flags === null || (parseInt(flags[1]!, 8) & O_CLOEXEC) !== 0) continue;
    try {
      closeSync(fd);
      closed.push(fd);
    } catch {
      // Closed meanwhile: nothing left to inherit.
    }
  }
  return closed.sort((a, b) => a - b);
}
