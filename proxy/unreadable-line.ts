/**
 * Host lines the proxy never passes on, because what it cannot read exactly it cannot check: a
 * laxer reader in the server might find a call in them that the proxy never saw
 * (docs/security.md, "Whose message is whose").
 */
import { isUtf8 } from 'node:buffer';
import { RpcCode, type RpcErrorObject } from '../protocol/rpc-errors.js';
import { ambiguousKeys } from './ambiguous-keys.js';
import { isObject, type McpLine } from './mcp-line.js';

/**
 * A control character (C0, DEL, C1) or a lone surrogate: a C reader stops a string at NUL, others
 * drop or replace the rest, so `tools/call\u0000x` is `tools/call` to them and an unknown method
 * to the proxy, which then checks nothing.
 */
const UNCLEAN =
  // eslint-disable-next-line no-control-regex -- control characters are what this finds
  /[\u0000-\u001f\u007f-\u009f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why the method or the named tool or prompt could be another name to another reader, or undefined. */
function uncleanName(line: McpLine): string | undefined {
  const names: [string, unknown][] = [
    ['the method', line.method],
    ['params.name', line.params.name],
  ];
  for (const [what, name] of names) {
    if (typeof name === 'string' && UNCLEAN.test(name)) {
      return `${what} ${JSON.stringify(name)} has a control character or a lone surrogate, which a reader that cuts or cleans strings reads as another name`;
    }
  }
  return undefined;
}

/** Methods the proxy checks: one sent without an id would reach the server unchecked. */
const CHECKED_METHODS = new Set([
  'tools/call',
  'resources/read',
  'prompts/get',
  'completion/complete',
  'resources/subscribe',
  'subscriptions/listen',
]);

const refused = (code: number, why: string): RpcErrorObject => ({
  code,
  message: `mcp-roots-proxy: the line was not passed to the server: ${why}`,
});

/** Why a host line must not reach the server, as the error the host gets; undefined if it may. */
export function unreadableHostLine(line: McpLine): RpcErrorObject | undefined {
  // JSON between systems is UTF-8 (RFC 8259); another decoding of the same bytes is another path.
  if (!isUtf8(line.bytes)) return refused(RpcCode.PARSE_ERROR, 'it is not UTF-8');
  if (line.msg === undefined) {
    return refused(RpcCode.PARSE_ERROR, 'it is not JSON (send one JSON-RPC message per line)');
  }
  const keys = ambiguousKeys(line.text);
  if (keys !== undefined) {
    return refused(RpcCode.INVALID_REQUEST, `${keys}; send each key once, spelled exactly`);
  }
  if (line.isResponse) return undefined;
  const name = uncleanName(line);
  if (name !== undefined) return refused(RpcCode.INVALID_REQUEST, `${name}; send the name exactly`);
  if (line.method === undefined) {
    return refused(RpcCode.INVALID_REQUEST, 'it is not a JSON-RPC request, notification or answer');
  }
  if (!line.isRequest && CHECKED_METHODS.has(line.method)) {
    return refused(
      RpcCode.INVALID_REQUEST,
      `${line.method} without an id is never checked; send it as a request, with an id`,
    );
  }
  const envelope = badEnvelope(line.msg, line.idText);
  if (envelope !== undefined) return refused(RpcCode.INVALID_REQUEST, envelope);
  return undefined;
}

/**
 * What of a request's or notification's envelope MCP's schema refuses, or undefined. The SDKs'
 * transports drop such a line without an answer, so the host waited for ever; and params that
 * are not an object are none to the proxy's checks (`McpLine.params`), while another reader might
 * find arguments in them.
 */
function badEnvelope(msg: Record<string, unknown>, idText: string | undefined): string | undefined {
  const id = msg.id;
  // A whole number past 2^53 passes: readers other than JavaScript's take it exactly, and the
  // proxy keeps it as written (test/proxy/stdio.test.ts).
  if ('id' in msg && typeof id !== 'string' && !Number.isInteger(id)) {
    return `its id is ${idText ?? 'not JSON'}; an MCP request's id is a string or a whole number`;
  }
  // A null member is read as none by every reader (and by the proxy's checks), so it passes.
  const params = msg.params ?? {};
  if (!isObject(params)) return 'its params are not an object; MCP sends params as an object';
  const meta = params._meta ?? {};
  if (!isObject(meta)) return 'its params._meta is not an object';
  const token = meta.progressToken ?? '';
  if (typeof token !== 'string' && !Number.isInteger(token)) {
    return 'its params._meta.progressToken is neither a string nor a whole number';
  }
  // A retry's answers (2026-07-28) are an object by input key, where the proxy puts the policy's
  // roots in place of the host's; in any other shape a lenient server could still read them.
  const responses = params.inputResponses ?? {};
  if (!isObject(responses)) {
    return 'its params.inputResponses is not an object; MCP sends the answers as an object by input key';
  }
  const state = params.requestState ?? '';
  if (typeof state !== 'string') return 'its params.requestState is not a string';
  return undefined;
}

/**
 * Why a server's line must not reach the host, or undefined: its keys could read differently to a
 * host's reader (a request id in the proxy's own namespace, say; an answer whose first `id` a
 * first-wins host reads, while the proxy matched the last to an open request). Only the envelope
 * is read: an answer's result, a log's data are the server's.
 */
export function unreadableServerLine(line: McpLine): string | undefined {
  const keys = ambiguousKeys(line.text, true);
  if (keys !== undefined) return `${keys}; send each key once, spelled exactly`;
  if (line.isResponse) return undefined;
  const name = uncleanName(line);
  return name === undefined ? undefined : `${name}; send the name exactly`;
}
