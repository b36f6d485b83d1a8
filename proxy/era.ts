/**
 * Which MCP era each host request belongs to. Revisions up to 2025-11-25 ("legacy") open with
 * `initialize`; 2026-07-28 and later ("modern") have no handshake: every request carries its
 * protocol version, client info and client capabilities in `params._meta`. A dual-era server may
 * serve both on one stdio process, so the era is decided per request, and the proxy's own
 * requests copy the envelope of the host's latest modern request.
 */
import { memberText, removeMember, setMember } from '../protocol/json-text.js';
import type { JsonObject } from '../protocol/messages.js';
import { isObject, type McpLine } from './mcp-line.js';

export const PROTOCOL_VERSION_KEY = 'io.modelcontextprotocol/protocolVersion';
export const CLIENT_INFO_KEY = 'io.modelcontextprotocol/clientInfo';
export const CLIENT_CAPABILITIES_KEY = 'io.modelcontextprotocol/clientCapabilities';

/** The keys of the per-request envelope the proxy copies into its own requests. */
const ENVELOPE_KEYS = [PROTOCOL_VERSION_KEY, CLIENT_INFO_KEY, CLIENT_CAPABILITIES_KEY] as const;

export type Era = 'legacy' | 'modern';

/** Whether a request's params carry the modern per-request envelope. */
export function hasModernEnvelope(params: JsonObject): boolean {
  const meta = params._meta;
  return isObject(meta) && typeof meta[PROTOCOL_VERSION_KEY] === 'string';
}

/** What the proxy has seen of the host's era in one session. */
export class SessionEra {
  private initializeSeen = false;
  /** The envelope of the host's latest modern request (only the keys in ENVELOPE_KEYS). */
  private envelope: JsonObject | undefined;
  /** The era of the host's latest request. */
  private latest: Era | undefined;

  /** The host sent `initialize`: requests without an envelope are legacy from now on. */
  noteInitialize(): void {
    this.initializeSeen = true;
  }

  /** The era of a host request or notification, remembering a modern envelope. */
  of(line: McpLine): Era {
    const params = line.params;
    let era: Era;
    if (hasModernEnvelope(params)) {
      const meta = params._meta as JsonObject;
      const envelope: JsonObject = {};
      for (const key of ENVELOPE_KEYS) if (key in meta) envelope[key] = meta[key];
      this.envelope = envelope;
      era = 'modern';
    } else if (line.method === 'initialize' || this.initializeSeen) {
      era = 'legacy';
    } else {
      // No handshake and no envelope: not a 2025 session, whatever else it is. Taken as modern,
      // so that a server's roots input requests are still the proxy's to answer.
      era = 'modern';
    }
    if (line.method !== undefined && line.isRequest) this.latest = era;
    return era;
  }

  /**
   * Whether the host has opened its session: sent `initialize`, or a request with the 2026-07-28
   * envelope. Until then the server has heard nothing the host said, and the proxy says nothing
   * in the host's name either (it would have to guess the era).
   */
  get opened(): boolean {
    return this.initializeSeen || this.envelope !== undefined;
  }

  /** The era the proxy's own next request should speak: that of the host's latest request. */
  get current(): Era {
    return this.latest ?? 'legacy';
  }

  /** The `_meta` for the proxy's own request in the current era (undefined in a legacy one). */
  ownMeta(hasRoots: boolean): JsonObject | undefined {
    if (this.current !== 'modern' || this.envelope === undefined) return undefined;
    const caps = this.envelope[CLIENT_CAPABILITIES_KEY];
    const rest: JsonObject = isObject(caps) ? { ...caps } : {};
    if (hasRoots) rest.roots = {};
    else delete rest.roots;
    return { ...this.envelope, [CLIENT_CAPABILITIES_KEY]: rest };
  }
}

/**
 * A modern request's text with the roots capability in its `_meta` set as the policy says: `{}`
 * when the policy gives the server roots (the server may then ask for them, and the proxy
 * answers), removed when it gives none. Everything else stays byte for byte.
 */
export function withModernRootsCapability(text: string, hasRoots: boolean): string {
  const paramsText = memberText(text, 'params');
  if (paramsText === undefined) return text;
  const metaText = memberText(paramsText, '_meta');
  if (metaText === undefined || !metaText.startsWith('{')) return text;
  const capsText = memberText(metaText, CLIENT_CAPABILITIES_KEY);
  const caps = capsText !== undefined && capsText.startsWith('{') ? capsText : '{}';
  const hadRoots = memberText(caps, 'roots') !== undefined;
  if (hasRoots === hadRoots) return text;
  const newCaps = hasRoots ? setMember(caps, 'roots', '{}') : removeMember(caps, 'roots');
  const newMeta = setMember(metaText, CLIENT_CAPABILITIES_KEY, newCaps);
  return setMember(text, 'params', setMember(paramsText, '_meta', newMeta));
}
