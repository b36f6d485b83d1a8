/**
 * What a server may ask the host for on its behalf. `sampling/createMessage` with
 * `includeContext: "allServers"` asks the host to put what the other MCP servers of the session
 * returned into the prompt, and hands the model's answer to this server: the contents of files
 * other servers read, under roots this server does not have, would reach it through the host.
 * `thisServer` and `none` give it nothing it did not have; MCP lets a host ignore the field, and
 * hosts that honour it are the reason to refuse it (docs/security.md, "Server-to-host requests").
 */
import type { JsonObject } from '../protocol/messages.js';
import { isObject } from './mcp-line.js';

const SAMPLING = 'sampling/createMessage';
/** The values that widen nothing. */
const OWN_CONTEXT = new Set(['none', 'thisServer']);

/**
 * A key as a loose reader matches it: Go's `encoding/json` ignores case, Python models fill
 * `include_context` from `includeContext`.
 */
const loose = (key: string): string => key.replace(/[_-]/g, '').toLowerCase();

/** Why the host must not be asked `method` with `params` for this server, or undefined. */
export function askRefusal(method: unknown, params: unknown): string | undefined {
  if (method !== SAMPLING || !isObject(params)) return undefined;
  const keys = Object.keys(params).filter((k) => loose(k) === 'includecontext');
  if (keys.length === 0) return undefined;
  if (keys.length > 1 || keys[0] !== 'includeContext') {
    return `params spells includeContext as ${keys.map((k) => JSON.stringify(k)).join(' and ')}, which a loose reader takes for includeContext; send it once, spelled exactly`;
  }
  const value = params.includeContext;
  if (typeof value === 'string' && OWN_CONTEXT.has(value)) return undefined;
  return `includeContext ${JSON.stringify(value)} would have the host hand this server what other servers read, outside its roots; ask with "thisServer" or "none"`;
}

/**
 * Why a server's answer must not reach the host: a 2026-07-28 `input_required` result whose input
 * requests ask the host what `askRefusal` refuses. Undefined when it may.
 */
export function inputRequestsRefusal(result: unknown): string | undefined {
  if (!isObject(result)) return undefined;
  // Under any spelling a loose host reads as `inputRequests`.
  for (const [member, requests] of Object.entries(result)) {
    if (loose(member) !== 'inputrequests' || !isObject(requests)) {
      continue;
    }
    for (const [key, request] of Object.entries(requests as JsonObject)) {
      if (!isObject(request)) continue;
      const why = askRefusal(request.method, request.params);
      if (why !== undefined) return `its input request ${JSON.stringify(key)}: ${why}`;
    }
  }
  return undefined;
}
