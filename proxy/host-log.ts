/**
 * What the person should see in the host, not only in a stderr log nobody opens: the proxy's own
 * MCP log messages (`notifications/message`), such as "mcp-rootsd is not reachable". A 2025-era
 * session only: 2026-07-28 deprecates logging and allows a message only inside a request that
 * asked for it, so there the refusals say the same.
 */
import { memberText, setMember } from '../protocol/json-text.js';
import { notificationLine } from '../protocol/messages.js';

/** RFC 5424 severities, as MCP names them, least severe first. */
const LEVELS = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

export type HostLogLevel = 'info' | 'notice' | 'warning' | 'error';

/** The logger name the proxy's messages carry. */
export const PROXY_LOGGER = 'mcp-roots-proxy';

export class HostLog {
  /** The least severe level the host wants (`logging/setLevel`); until it says, everything. */
  private minimum = 0;
  /** Whether the server itself declared `logging` (then it, not the proxy, answers `setLevel`). */
  serverLogs = true;
  /** Whether the host has the server's `initialize` result (messages before it would be lost). */
  private open = false;

  constructor(private readonly toHost: (line: string) => void) {}

  /** The server's `initialize` result as the host should see it: `logging` declared. */
  initializeResult(text: string): string {
    const result = memberText(text, 'result');
    if (result === undefined || !result.startsWith('{')) return text;
    const caps = memberText(result, 'capabilities');
    const capsText = caps !== undefined && caps.startsWith('{') ? caps : '{}';
    this.serverLogs = memberText(capsText, 'logging') !== undefined;
    if (this.serverLogs) return text;
    const newCaps = setMember(capsText, 'logging', '{}');
    return setMember(text, 'result', setMember(result, 'capabilities', newCaps));
  }

  /** The host has the `initialize` result: messages may be sent from now on. */
  opened(): void {
    this.open = true;
  }

  /** `logging/setLevel` from the host: the level, or false when it names none the spec has. */
  setLevel(level: unknown): boolean {
    const at = typeof level === 'string' ? LEVELS.indexOf(level) : -1;
    if (at === -1) return false;
    this.minimum = at;
    return true;
  }

  /** Send a message at `level`, unless the host asked for more severe ones only. */
  send(level: HostLogLevel, text: string): void {
    if (!this.open || LEVELS.indexOf(level) < this.minimum) return;
    const params = { level, logger: PROXY_LOGGER, data: text };
    this.toHost(notificationLine('notifications/message', JSON.stringify(params)));
  }
}
