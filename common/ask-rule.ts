/**
 * Which refusals the policy's `ask:` lets mcp-roots-proxy put to the person: one place for the
 * rule, which the proxy acts on and `rootsctl check` and `explain` describe.
 */
import type { Access, AskRule, RefusalKind } from './types.js';

/** Whether a refusal of this kind may be asked about under `rule` (absent: never ask). */
export function asksAbout(
  rule: AskRule | undefined,
  refusal: RefusalKind | undefined,
  access: Access,
): boolean {
  if (rule === undefined) return false;
  if (refusal === 'outside') return rule.outside;
  // A grant lifts a write in a read-only root, as the longest root decides.
  return refusal === 'read-only' && access === 'write' && rule.write;
}
