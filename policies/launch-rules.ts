/** `servers.<name>.launch` and `servers.<name>.sandbox` merged over the blocks that match a name. */
import { dirname } from 'node:path';
import type { ExplainResult, SandboxRule } from '../common/types.js';
import { expandPath } from './expand.js';
import type { ParsedPolicyFile, PolicyContext, ServerBlock } from './model.js';

/**
 * The last matching block's `launch` wins (like a later tool rule). A sandbox asked for by any
 * block stays on (a later block cannot turn it off), the extra paths add up, and one block's
 * `network: false` is enough. Unix sockets are allowed when a block says `unixSockets: true`
 * and none says `false`. A path that does not expand is left out: it shows nothing.
 */
export function launchRules(
  blocks: readonly { block: ServerBlock; file: ParsedPolicyFile }[],
  ctx: PolicyContext,
): Pick<ExplainResult, 'launch' | 'sandbox'> {
  const out: Pick<ExplainResult, 'launch' | 'sandbox'> = {};
  let sandbox: SandboxRule | undefined;
  let unixSockets: boolean | undefined;
  for (const { block, file } of blocks) {
    if (block.launch !== undefined) out.launch = block.launch;
    if (block.sandbox === undefined) continue;
    sandbox ??= { read: [], write: [], network: true };
    const expand = (raw: string): string[] => {
      const e = expandPath(raw, file.dir ?? dirname(file.file), ctx);
      return e.ok ? [e.path] : [];
    };
    sandbox.read.push(...block.sandbox.read.flatMap(expand));
    sandbox.write.push(...block.sandbox.write.flatMap(expand));
    if (block.sandbox.network === false) sandbox.network = false;
    if (block.sandbox.unixSockets !== undefined)
      unixSockets = unixSockets !== false && block.sandbox.unixSockets;
  }
  if (sandbox !== undefined && unixSockets === true) sandbox.unixSockets = true;
  if (sandbox !== undefined) out.sandbox = sandbox;
  return out;
}
