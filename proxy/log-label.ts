/**
 * The tool and host names the proxy sends with each `roots/check` and `log/ask`, for the decision
 * log. The daemon takes a label of at most `MAX_LABEL` printable characters and refuses the whole
 * request otherwise; the agent chooses the tool name of a call, a server the names of its tools,
 * so a name past that would leave a refusal out of the log. Each label is made to fit instead:
 * a control character is shown as `\uXXXX`, and a label cut short ends in `…`.
 */
import { cutWhole, wellFormed } from '../common/well-formed.js';
import { MAX_LABEL, MAX_REASON } from '../protocol/validate-params.js';

/** `name` as a label the daemon takes. */
export function logLabel(name: string): string {
  const shown = name.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return shown.length <= MAX_LABEL ? shown : `${cutWhole(shown, MAX_LABEL - 1)}…`;
}

/**
 * A refusal's reason as the daemon takes it: at most `MAX_REASON` units, well-formed. Its paths
 * and argument names are the caller's, and a reason past that left the refusal out of the log
 * (an attacker pass).
 */
export function fitReason(reason: string): string {
  const whole = wellFormed(reason);
  return whole.length <= MAX_REASON ? whole : `${cutWhole(whole, MAX_REASON - 1)}…`;
}

/** The labels of a request, made to fit. */
export function fitLabels<T extends { tool?: string; client?: string }>(params: T): T {
  const out = { ...params };
  if (out.tool !== undefined) out.tool = logLabel(out.tool);
  if (out.client !== undefined) out.client = logLabel(out.client);
  return out;
}
