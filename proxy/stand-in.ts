/**
 * The server's place while it is not running: an in-process MCP server on a stream pair, which
 * the proxy's router talks to exactly as to a child. Waiting for roots, it serves no tools (and
 * the host learns of the real ones through list_changed once the server starts). Refused, it
 * answers every request with an error that says why and how to fix it.
 */
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { memberText } from '../protocol/json-text.js';
import { errorLine, resultLine } from '../protocol/messages.js';
import { PROTOCOL_VERSION_KEY } from './era.js';
import { SUBSCRIPTION_ID_KEY } from './host-subscriptions.js';
import { HOST_LINE_CAP, isOverlong, LineSplitter } from './line-splitter.js';

/** Why the server is not running. */
export type StandInMode = { kind: 'wait' | 'refuse'; reason: string };

/** The stand-in as the router sees it: the server's input and output. */
export interface StandIn {
  serverIn: Writable;
  serverOut: Readable;
  /** End the output, as a server that exits would. */
  close(): void;
}

/** The latest protocol revision the stand-in speaks when the host asks for one it does not know. */
const FALLBACK_VERSION = '2025-06-18';
const KNOWN_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
/** The revisions without a handshake the stand-in speaks (`server/discover`, per-request `_meta`). */
const MODERN_VERSIONS = ['2026-07-28'];

const EMPTY_LISTS: Record<string, object> = {
  'tools/list': { tools: [] },
  'prompts/list': { prompts: [] },
  'resources/list': { resources: [] },
  'resources/templates/list': { resourceTemplates: [] },
};

/** The cache hint of a 2026-07-28 result that may not be kept. */
const NO_CACHE = { ttlMs: 0, cacheScope: 'private' };

/** A stand-in for `server`. */
export function startStandIn(server: string, version: string, mode: StandInMode): StandIn {
  const serverIn = new PassThrough();
  const serverOut = new PassThrough();
  const splitter = new LineSplitter(HOST_LINE_CAP);
  const write = (line: string): void => {
    if (!serverOut.writableEnded) serverOut.write(`${line}\n`);
  };
  const send = (msg: object): void => write(JSON.stringify({ jsonrpc: '2.0', ...msg }));
  const message = `mcp-roots-proxy: the MCP server ${JSON.stringify(server)} is not running: ${mode.reason}`;
  const onLine = (bytes: Buffer): void => {
    let msg: {
      id?: unknown;
      method?: unknown;
      params?: {
        protocolVersion?: unknown;
        notifications?: unknown;
        _meta?: Record<string, unknown>;
      };
    };
    try {
      msg = JSON.parse(bytes.toString('utf8')) as typeof msg;
    } catch {
      return;
    }
    if (typeof msg !== 'object' || msg === null || typeof msg.method !== 'string') return;
    if (!('id' in msg)) return;
    // The id as the host wrote it: a number beyond 2^53 must come back byte for byte.
    const id = memberText(bytes.toString('utf8'), 'id') ?? 'null';
    const fail = (): void => write(errorLine(id, { code: -32603, message }));
    if (mode.kind === 'refuse') {
      fail();
      return;
    }
    // A 2026-07-28 request names its revision in `_meta`, and every result to it says it is
    // complete: a host of that era rejects a result without `resultType`.
    const modern = typeof msg.params?._meta?.[PROTOCOL_VERSION_KEY] === 'string';
    const answer = (result: object): void =>
      write(
        resultLine(id, JSON.stringify(modern ? { resultType: 'complete', ...result } : result)),
      );
    if (msg.method === 'server/discover') {
      answer({
        ...NO_CACHE,
        supportedVersions: [...MODERN_VERSIONS, ...[...KNOWN_VERSIONS].reverse()],
        capabilities: { tools: { listChanged: true } },
        serverInfo: { name: `${server} (not started yet)`, version },
        instructions: `${message}. Its tools appear when the policy gives it a root.`,
      });
      return;
    }
    if (msg.method === 'subscriptions/listen') {
      // The stream stays open: the proxy replays it to the real server once that starts, and
      // tells the host on it that the tools changed.
      const notifications =
        typeof msg.params?.notifications === 'object' ? msg.params.notifications : {};
      send({
        method: 'notifications/subscriptions/acknowledged',
        params: { notifications, _meta: { [SUBSCRIPTION_ID_KEY]: msg.id } },
      });
      return;
    }
    if (msg.method === 'initialize') {
      const asked = msg.params?.protocolVersion;
      const protocolVersion =
        typeof asked === 'string' && KNOWN_VERSIONS.includes(asked) ? asked : FALLBACK_VERSION;
      write(
        resultLine(
          id,
          JSON.stringify({
            protocolVersion,
            capabilities: { tools: { listChanged: true } },
            serverInfo: { name: `${server} (not started yet)`, version },
            instructions: `${message}. Its tools appear when the policy gives it a root.`,
          }),
        ),
      );
      return;
    }
    if (msg.method === 'ping') return answer({});
    const empty = EMPTY_LISTS[msg.method];
    // A 2026-07-28 list is cacheable and must say for how long: not at all, since it changes
    // the moment the server starts.
    if (empty !== undefined) return answer(modern ? { ...empty, ...NO_CACHE } : empty);
    fail();
  };
  serverIn.on('data', (chunk: Buffer) => {
    for (const line of splitter.push(chunk)) if (!isOverlong(line)) onLine(line);
  });
  return {
    serverIn,
    serverOut,
    close: () => {
      serverIn.destroy();
      serverOut.end();
    },
  };
}
