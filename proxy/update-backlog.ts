/**
 * The server's `notifications/resources/updated` lines that wait for the daemon's check of their
 * URI (server-lines.ts). Each one holds its line until the answer comes, so a server that floods
 * updates while mcp-rootsd is slow could make the proxy hold any number of them, each up to the
 * 64 MiB line cap. The backlog bounds that: past `maxLines` lines or `maxBytes` bytes waiting, an
 * update is dropped (a request form is answered with an error). An update is only a hint to read
 * again, so dropping one loses nothing the host could not fetch, and fails closed. Updates of one
 * URI waiting at once share one check, but only while the daemon's view of the policy is the one
 * the check was asked under: an update that arrives after a new list (a deny added, a root
 * removed) starts its own check, so an answer the daemon gave under the old policy is never
 * borrowed by an update sent under the new one.
 */
import type { ProxyLogger } from './log.js';

/** The most updates waiting for a check at once; a real server sends a few per change. */
export const MAX_WAITING_UPDATES = 256;
/** The most bytes of update lines waiting at once (a real update is about 100 bytes). */
export const MAX_WAITING_UPDATE_BYTES = 4 * 1024 * 1024;

/** What becomes of one update: passed without a check, checked later, or dropped now. */
export type UpdateAdmission =
  | { kind: 'unchecked' }
  | { kind: 'checked'; refusal: Promise<string | undefined> }
  | { kind: 'full'; why: string };

export class UpdateBacklog {
  private lines = 0;
  private bytes = 0;
  /** Dropped since the backlog was last empty; said once when it empties. */
  private dropped = 0;
  private readonly checks = new Map<string, Promise<string | undefined>>();

  constructor(
    private readonly check: (uri: string) => Promise<string | undefined> | undefined,
    private readonly log: ProxyLogger,
    private readonly maxLines = MAX_WAITING_UPDATES,
    private readonly maxBytes = MAX_WAITING_UPDATE_BYTES,
  ) {}

  /**
   * The daemon's policy moved on (a new roots list, or the link lost): checks asked before it stop
   * being shared; updates already waiting on them keep their own answer.
   */
  policyMoved(): void {
    this.checks.clear();
  }

  /** Admit an update of `uri`, `size` bytes long. A checked one is counted until it settles. */
  admit(uri: string, size: number): UpdateAdmission {
    if (this.lines >= this.maxLines || this.bytes + size > this.maxBytes) {
      if (this.dropped++ === 0) {
        this.log.warn(
          `the server sends resources/updated faster than mcp-rootsd checks them: ${this.lines} wait (${this.bytes} bytes); dropping more until they are checked`,
        );
      }
      return {
        kind: 'full',
        why: `${this.lines} of the server's updates are waiting for mcp-rootsd's check already`,
      };
    }
    let refusal = this.checks.get(uri);
    if (refusal === undefined) {
      refusal = this.check(uri);
      if (refusal === undefined) return { kind: 'unchecked' };
      this.checks.set(uri, refusal);
      const forget = (): void => {
        if (this.checks.get(uri) === refusal) this.checks.delete(uri);
      };
      refusal.then(forget, forget);
    }
    this.lines++;
    this.bytes += size;
    const settled = (): void => {
      this.lines--;
      this.bytes -= size;
      if (this.lines === 0 && this.dropped > 0) {
        this.log.warn(
          `dropped ${this.dropped} of the server's resources/updated while it flooded them`,
        );
        this.dropped = 0;
      }
    };
    return { kind: 'checked', refusal: refusal.finally(settled) };
  }
}
