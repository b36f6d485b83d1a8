/**
 * Whether bubblewrap can sandbox a server here: the program is on PATH, an unprivileged user
 * namespace can be made and the sandbox's system call filter installed. When it cannot, which of
 * the kernel's switches is off (or what refuses the filter), and how to turn it on.
 */
import { probeBwrap } from '../../common/bwrap.js';
import { bwrapFixes, bwrapSaid, INSTALL_BWRAP } from '../../common/bwrap-fixes.js';
import { findOnPath } from '../../common/find-on-path.js';
import type { Env } from '../../common/locations.js';
import { fail, ok, warn, type Check } from './check.js';

/** The sandbox line of `rootsctl doctor`; `needed` when some server in the policy must be sandboxed. */
export async function sandboxCheck(env: Env, procSys: string, needed: boolean): Promise<Check> {
  const name = 'sandbox (bubblewrap)';
  const bad = needed ? fail : warn;
  const why = needed ? '' : ' (only servers run with --sandbox need it)';
  const bwrap = await findOnPath('bwrap', env, process.cwd());
  if (bwrap === undefined) {
    return bad(name, `bwrap is not on PATH; servers cannot be sandboxed${why}`, [INSTALL_BWRAP]);
  }
  const probe = await probeBwrap(bwrap, env);
  if (probe.ok) return ok(name, `${bwrap} can make user namespaces here`);
  return bad(
    name,
    `${bwrap} is installed but cannot make a sandbox here${why}: ${bwrapSaid(probe)}`,
    await bwrapFixes(probe, procSys),
  );
}
