/**
 * The tool and host names the proxy sends with each `roots/check` and `log/ask`, for the decision
 * log. The daemon takes a label of at most `MAX_LABEL` printable characters and refuses the whole
 * request otherwise; the agent chooses the tool name of a call, a server the names of its tools,
 * so a name past that would leave a refusal out of the log. Each label is made to fit instead:
 * a control character is shown as `\uXXXX`, and a label cut short ends in `…`.
 */
import { MAX_LABEL } from '../protocol/validate-params.js';

/** `name` as a label the daemon takes. */
export function logLabel(name: string): string {
  const shown = name.replace(
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  if (shown.length <= MAX_LABEL) return shown;
  let cut = shown.slice(0, MAX_LABEL - 1);
  // Not half of a surrogate pair.
  if (/[\uD800-\uDBFF]$/.test(cut)) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/** The labels of a request, made to fit. */
export function fitLabels<T extends { tool?: string; client?: string }>(params: T): T {
  const out = { ...params };
  if (out.tool !== undefined) out.tool = logLabel(out.tool);
  if (out.client !== undefined) out.client = logLabel(out.client);
  return out;
}
