/**
 * Whether bubblewrap can sandbox a server here: the program is on PATH, an unprivileged user
 * namespace can be made and the sandbox's system call filter installed. When it cannot, which of
 * the kernel's switches is off (or what refuses the filter), and how to turn it on.
 */
import { access, constants, readFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { probeBwrap } from '../../common/bwrap.js';
import { FILTERED_ARCHITECTURES } from '../../common/seccomp-filter.js';
import type { Env } from '../../common/locations.js';
import { fail, ok, warn, type Check } from './check.js';

/** The first `name` on `PATH` that is executable, or undefined. */
export async function onPath(name: string, env: Env): Promise<string | undefined> {
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (dir === '') continue;
    const file = join(dir, name);
    try {
      await access(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

async function readSysctl(procSys: string, key: string): Promise<string | undefined> {
  try {
    return (await readFile(join(procSys, ...key.split('.')), 'utf8')).trim();
  } catch {
    return undefined;
  }
}

/** The kernel switches that refuse unprivileged user namespaces, with the fix for each. */
async function userNamespaceFixes(procSys: string): Promise<string[]> {
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
    fixes.push(
      'AppArmor restricts user namespaces (Ubuntu 24.04 and later): allow them for bwrap alone with a profile:',
      "  printf 'abi <abi/4.0>,\\ninclude <tunables/global>\\nprofile bwrap /usr/bin/bwrap flags=(unconfined) {\\n  userns,\\n}\\n' | sudo tee /etc/apparmor.d/bwrap",
      '  sudo apparmor_parser -r /etc/apparmor.d/bwrap',
      '  (or, for every program: sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0)',
    );
  }
  return fixes;
}

/** What to do when the sandbox's system call filter cannot be installed. */
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

/** The sandbox line of `rootsctl doctor`; `needed` when some server in the policy must be sandboxed. */
export async function sandboxCheck(env: Env, procSys: string, needed: boolean): Promise<Check> {
  const name = 'sandbox (bubblewrap)';
  const bad = needed ? fail : warn;
  const why = needed ? '' : ' (only servers run with --sandbox need it)';
  const bwrap = await onPath('bwrap', env);
  if (bwrap === undefined) {
    return bad(name, `bwrap is not on PATH; servers cannot be sandboxed${why}`, [
      'sudo apt-get install bubblewrap   (Debian, Ubuntu; dnf install bubblewrap on Fedora)',
    ]);
  }
  const probe = await probeBwrap(bwrap, env);
  if (probe.ok) return ok(name, `${bwrap} can make user namespaces here`);
  const fixes =
    probe.cause === 'namespaces' ? await userNamespaceFixes(procSys) : FILTER_FIXES[probe.cause];
  return bad(
    name,
    `${bwrap} is installed but cannot make a sandbox here${why}: ${probe.output.trim().split('\n')[0] || `exit ${probe.code}`}`,
    fixes.length > 0
      ? fixes
      : [
          'unprivileged user namespaces seem refused; check `sysctl -a | grep userns` and your container or VM settings',
        ],
  );
}
