/**
 * Trying bubblewrap once, the way the proxy will run a server in it: a new user, PID and mount
 * namespace, fresh /proc and /dev, and the system call filter. The proxy asks before sandboxing a
 * server and `rootsctl doctor` asks to report; both ask here, so the doctor's verdict is the
 * proxy's.
 */
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { FILTERED_ARCHITECTURES, sandboxFilter } from './seccomp-filter.js';

/** A probe that hangs (a stuck FUSE mount, a wedged kernel) is a failure, not a wait forever. */
const PROBE_TIMEOUT_MS = 10_000;

/**
 * Why a probe failed, for the fix to give: no filter for this architecture, a kernel or container
 * that refuses seccomp filters, or anything else (most often user namespaces refused).
 */
export type BwrapRefusal = 'architecture' | 'seccomp' | 'namespaces';

/** The outcome of running `bwrap` with the proxy's namespaces around `true`. */
export type BwrapProbe =
  | { ok: true; disableUserns: boolean }
  | { ok: false; code: number; output: string; cause: BwrapRefusal };

/** bwrap's words when the kernel refuses the filter (bubblewrap's `--seccomp` setup). */
const SECCOMP_REFUSED = /PR_SET_SECCOMP|system call filtering/;

/**
 * Run `file args`, collecting stderr and stdout, with `fd3` (if given) to read on descriptor 3; a
 * spawn failure is exit code 127.
 */
function run(
  file: string,
  args: string[],
  env: Readonly<Record<string, string | undefined>>,
  fd3?: Buffer,
): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, {
      env,
      stdio: ['ignore', 'pipe', 'pipe', ...(fd3 === undefined ? [] : ['pipe' as const])],
      timeout: PROBE_TIMEOUT_MS,
    });
    let stderr = '';
    let stdout = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    if (fd3 !== undefined) {
      const input = child.stdio[3] as Readable & Writable;
      input.on('error', () => {}); // bwrap gone before reading it: its exit says why
      input.end(fd3);
    }
    child.once('error', (err) => resolve({ code: 127, output: err.message }));
    child.once('close', (code) => resolve({ code: code ?? 1, output: stderr + stdout }));
  });
}

/** Run the bwrap at `bwrap` once; `disableUserns` when it can also forbid nested namespaces. */
export async function probeBwrap(
  bwrap: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<BwrapProbe> {
  const filter = sandboxFilter();
  if (filter === undefined) {
    return {
      ok: false,
      code: 1,
      cause: 'architecture',
      output: `the sandbox has no system call filter for this machine's architecture (${process.arch}; it has one for ${FILTERED_ARCHITECTURES.join(', ')})`,
    };
  }
  const help = await run(bwrap, ['--help'], env);
  const disableUserns = help.output.includes('--disable-userns');
  const probe = await run(
    bwrap,
    [
      '--unshare-user',
      '--unshare-pid',
      ...(disableUserns ? ['--disable-userns'] : []),
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--seccomp',
      '3',
      'true',
    ],
    env,
    filter,
  );
  if (probe.code === 0) return { ok: true, disableUserns };
  return {
    ok: false,
    ...probe,
    cause: SECCOMP_REFUSED.test(probe.output) ? 'seccomp' : 'namespaces',
  };
}
