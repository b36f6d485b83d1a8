/** Whether bubblewrap can run here, and if not, why and how to fix it. Never a fallback. */
import { probeBwrap } from '../common/bwrap.js';
import { bwrapFixes, bwrapSaid, INSTALL_BWRAP } from '../common/bwrap-fixes.js';
import { findOnPath } from '../common/find-on-path.js';

/** bwrap found and working, or the reason it cannot be used. */
export type SandboxSupport =
  { ok: true; bwrap: string; disableUserns: boolean } | { ok: false; reason: string };

/** Find bwrap on PATH and run it once the way the proxy will. */
export async function probeSandbox(
  env: Readonly<Record<string, string | undefined>>,
): Promise<SandboxSupport> {
  const bwrap = await findOnPath('bwrap', env, process.cwd());
  if (bwrap === undefined) {
    return {
      ok: false,
      reason: `bubblewrap (bwrap) is not on PATH (${env.PATH ?? 'PATH is not set'}): ${INSTALL_BWRAP}`,
    };
  }
  const probe = await probeBwrap(bwrap, env);
  if (probe.ok) return { ok: true, bwrap, disableUserns: probe.disableUserns };
  const fixes = (await bwrapFixes(probe)).map((line) => line.trim()).join(' ');
  return {
    ok: false,
    reason: `${bwrap} cannot make a sandbox here (${bwrapSaid(probe)}): ${fixes}`,
  };
}
