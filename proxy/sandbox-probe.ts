/** Whether bubblewrap can run here, and if not, why and how to fix it. Never a fallback. */
import { probeBwrap, type BwrapRefusal } from '../common/bwrap.js';
import { findOnPath } from './program.js';

/** bwrap found and working, or the reason it cannot be used. */
export type SandboxSupport =
  { ok: true; bwrap: string; disableUserns: boolean } | { ok: false; reason: string };

const INSTALL =
  'install the package bubblewrap (Debian/Ubuntu: sudo apt install bubblewrap; Fedora: sudo dnf install bubblewrap; Arch: sudo pacman -S bubblewrap)';

/** Why user namespaces (or the system call filter) were refused, and the fix for that cause. */
function refusalAdvice(stderr: string, cause: BwrapRefusal): string {
  const text = stderr.trim().split('\n').slice(-1)[0] ?? '';
  if (cause === 'architecture') return stderr;
  if (cause === 'seccomp') {
    return `${text}: the sandbox does not start without it (it keeps the server from outliving the sandbox). Kernels need CONFIG_SECCOMP_FILTER, which distributions enable; a container must allow seccomp`;
  }
  const base = `bwrap cannot create a user namespace here (${text})`;
  if (/uid map|setting up uid|Permission denied/i.test(stderr)) {
    return `${base}. On Ubuntu 24.04 and later, AppArmor restricts unprivileged user namespaces: allow them for bwrap with an AppArmor profile (newer Ubuntus ship /etc/apparmor.d/bwrap-userns-restrict: sudo apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict), or turn the restriction off with sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`;
  }
  if (/No permissions to creat|Operation not permitted|not supported/i.test(stderr)) {
    return `${base}. Enable unprivileged user namespaces: sudo sysctl kernel.unprivileged_userns_clone=1 (Debian before 11) or sudo sysctl user.max_user_namespaces=15000; inside a container, run it with user namespaces allowed`;
  }
  return `${base}. Run  bwrap --unshare-user --ro-bind / / true  to see the error`;
}

/** Find bwrap on PATH and run it once the way the proxy will. */
export async function probeSandbox(
  env: Readonly<Record<string, string | undefined>>,
): Promise<SandboxSupport> {
  const bwrap = await findOnPath('bwrap', env, process.cwd());
  if (bwrap === undefined) {
    return {
      ok: false,
      reason: `bubblewrap (bwrap) is not on PATH (${env.PATH ?? 'PATH is not set'}): ${INSTALL}`,
    };
  }
  const probe = await probeBwrap(bwrap, env);
  if (!probe.ok) return { ok: false, reason: refusalAdvice(probe.output, probe.cause) };
  return { ok: true, bwrap, disableUserns: probe.disableUserns };
}
