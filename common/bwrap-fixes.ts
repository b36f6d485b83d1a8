/**
 * What to do when bubblewrap cannot sandbox a server here: one text, which the proxy's refusal
 * and `rootsctl doctor`'s fixes both give, so the two never advise differently.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { BwrapRefusal } from './bwrap.js';
import { FILTERED_ARCHITECTURES } from './seccomp-filter.js';

/** The package to install, per distribution. */
export const INSTALL_BWRAP =
  'install the package bubblewrap (Debian, Ubuntu: sudo apt-get install bubblewrap; Fedora: sudo dnf install bubblewrap; Arch: sudo pacman -S bubblewrap)';

/** The fixes when the sandbox's system call filter cannot be installed. */
const FILTER_FIXES: Record<'architecture' | 'seccomp', string[]> = {
  architecture: [
    `the sandbox's filter (it keeps a server from reaching the sandbox's init) has tables for ${FILTERED_ARCHITECTURES.join(', ')} only: run servers here without --sandbox, or on one of those`,
  ],
  seccomp: [
    'the kernel or the container refuses seccomp filters, which the sandbox needs (they keep a server from outliving its sandbox):',
    '  a kernel needs CONFIG_SECCOMP_FILTER=y (every major distribution builds it in): grep SECCOMP_FILTER /boot/config-$(uname -r)',
    '  a container or VM runtime that blocks seccomp (some CI runners, gVisor set-ups): run the proxy outside it, or allow seccomp there',
  ],
};

const APPARMOR_FIX = [
  'AppArmor restricts unprivileged user namespaces (Ubuntu 24.04 and later): allow them for bwrap alone with a profile (newer Ubuntus ship one: sudo apparmor_parser -r /etc/apparmor.d/bwrap-userns-restrict), or write one:',
  "  printf 'abi <abi/4.0>,\\ninclude <tunables/global>\\nprofile bwrap /usr/bin/bwrap flags=(unconfined) {\\n  userns,\\n}\\n' | sudo tee /etc/apparmor.d/bwrap",
  '  sudo apparmor_parser -r /etc/apparmor.d/bwrap',
  '  (or, for every program: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0)',
];

async function readSysctl(procSys: string, key: string): Promise<string | undefined> {
  try {
    return (await readFile(join(procSys, ...key.split('.')), 'utf8')).trim();
  } catch {
    return undefined;
  }
}

/** The kernel switches under `procSys` that refuse unprivileged user namespaces, with a fix each. */
async function switchesOff(procSys: string): Promise<string[]> {
  const fixes: string[] = [];
  if ((await readSysctl(procSys, 'kernel.unprivileged_userns_clone')) === '0') {
    fixes.push(
      'user namespaces are off (Debian): sudo sysctl -w kernel.unprivileged_userns_clone=1',
      '  and keep it: echo kernel.unprivileged_userns_clone=1 | sudo tee /etc/sysctl.d/60-userns.conf',
    );
  }
  if ((await readSysctl(procSys, 'user.max_user_namespaces')) === '0') {
    fixes.push(
      'user.max_user_namespaces is 0: sudo sysctl -w user.max_user_namespaces=15000',
      '  and keep it: echo user.max_user_namespaces=15000 | sudo tee /etc/sysctl.d/60-userns.conf',
    );
  }
  if ((await readSysctl(procSys, 'kernel.apparmor_restrict_unprivileged_userns')) === '1') {
    fixes.push(...APPARMOR_FIX);
  }
  return fixes;
}

/**
 * When no switch says why, bwrap's own words: AppArmor's refusal reads as a denied uid map, a
 * namespace limit or a container as "not permitted".
 */
function fromBwrapWords(output: string): string[] {
  if (/uid map|setting up uid|Permission denied/i.test(output)) return APPARMOR_FIX;
  if (/No permissions to creat|Operation not permitted|not supported/i.test(output)) {
    return [
      'unprivileged user namespaces are refused: sudo sysctl -w user.max_user_namespaces=15000 (or, on Debian before 11, sudo sysctl -w kernel.unprivileged_userns_clone=1); inside a container, run it with user namespaces allowed',
    ];
  }
  return [
    'unprivileged user namespaces seem refused: run  bwrap --unshare-user --ro-bind / / true  to see the error, and check `sysctl -a | grep userns` and your container or VM settings',
  ];
}

/**
 * The fixes for a refused probe, first line first: for its cause, and for refused namespaces the
 * kernel switches that are off (read under `procSys`), else what bwrap's words point to.
 */
export async function bwrapFixes(
  refusal: { cause: BwrapRefusal; output: string },
  procSys = '/proc/sys',
): Promise<string[]> {
  if (refusal.cause !== 'namespaces') return FILTER_FIXES[refusal.cause];
  const off = await switchesOff(procSys);
  return off.length > 0 ? off : fromBwrapWords(refusal.output);
}

/** What a refused probe said, in one line: bwrap's last words (the error it stopped on). */
export function bwrapSaid(refusal: { code: number; output: string }): string {
  return refusal.output.trim().split('\n').slice(-1)[0] || `exit ${refusal.code}`;
}
