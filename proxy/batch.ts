/**
 * JSON-RPC batches (a line that is a JSON array). MCP 2025-03-26 allowed them; 2025-06-18 removed
 * them, and no later revision brought them back. The proxy never relays a batch as one line:
 * every element is either handled exactly as if it had come alone, or refused (docs/security.md,
 * "JSON-RPC batches").
 */
import { errorLine } from '../protocol/messages.js';
import { RpcCode } from '../protocol/rpc-errors.js';
import { isObject, McpLine } from './mcp-line.js';

/** The refusal a host's batched request gets, in place of the server's answer. */
export const BATCH_REFUSED =
  'mcp-roots-proxy: JSON-RPC batches are not relayed (MCP 2025-06-18 removed them); ' +
  'send each request on its own line';

/** True when the line's first non-blank byte opens a JSON array. */
export function looksLikeBatch(bytes: Buffer): boolean {
  for (const b of bytes) {
    if (b === 0x20 || b === 0x09 || b === 0x0d || b === 0x0a) continue;
    return b === 0x5b; // '['
  }
  return false;
}

/**
 * The text of each element of a JSON array, exactly as written (ids above 2^53 survive), or
 * undefined when the text is not a JSON array.
 */
export function batchElements(text: string): string[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(value)) return undefined;
  const parts: string[] = [];
  let depth = 0;
  let inString = false;
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '[' || c === '{') {
      depth++;
      if (depth === 1 && c === '[') start = i + 1;
      continue;
    } else if (c === ']' || c === '}') {
      if (depth === 1) pushPart(parts, text.slice(start, i));
      depth--;
      continue;
    }
    if (depth === 1 && c === ',') {
      pushPart(parts, text.slice(start, i));
      start = i + 1;
    }
  }
  // JSON.parse accepted it, so the scan saw the same elements.
  return parts.length === value.length ? parts : value.map((v) => JSON.stringify(v));
}

/** The id to answer an invalid element with: its own when it has a usable one, else null. */
function idOf(line: McpLine): string {
  return isObject(line.msg) && line.idKey !== undefined ? (line.idText ?? 'null') : 'null';
}

function pushPart(parts: string[], raw: string): void {
  const t = raw.trim();
  if (t !== '') parts.push(t);
}

/** What a host's batch becomes: lines to handle alone, and the batch-shaped refusal to answer. */
export interface HostBatch {
  /** Notifications and responses, each handled as if it had come on its own line. */
  alone: McpLine[];
  /** The array to answer the host with, or undefined when nothing in the batch asks an answer. */
  refusal: string | undefined;
  /** The id keys of the refused requests: the proxy answered them, the server never saw them. */
  refusedKeys: (string | undefined)[];
}

/**
 * Split a host's batch: every request is refused (one error per request, in one array, as
 * JSON-RPC answers a batch); notifications and responses go on as if each had come alone.
 */
export function splitHostBatch(elements: string[]): HostBatch {
  const alone: McpLine[] = [];
  const errors: string[] = [];
  const refusedKeys: (string | undefined)[] = [];
  const invalid = (id: string, message: string): void => {
    errors.push(errorLine(id, { code: RpcCode.INVALID_REQUEST, message }));
  };
  if (elements.length === 0) invalid('null', 'mcp-roots-proxy: an empty JSON-RPC batch');
  for (const text of elements) {
    const line = new McpLine(Buffer.from(text, 'utf8'));
    if (line.isRequest) {
      invalid(line.idText ?? 'null', BATCH_REFUSED);
      refusedKeys.push(line.idKey);
    } else if (line.msg !== undefined && (line.isResponse || line.method !== undefined))
      alone.push(line);
    else invalid(idOf(line), 'mcp-roots-proxy: a batch element that is not a JSON-RPC message');
  }
  return { alone, refusal: errors.length > 0 ? `[${errors.join(',')}]` : undefined, refusedKeys };
}
