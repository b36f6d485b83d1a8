/**
 * A server's rules beyond its roots (the policy's `launch`, `sandbox`, `tools` and `ask`) reach
 * its subscribers when they change. The roots push (`notifications/roots/list_changed`) fires only
 * when a list changes, so an edit of `sandbox.read` or `launch.args` alone would never reach the
 * proxy that starts the server: this sends `notifications/policy/rules_changed` for it instead,
 * and the proxy asks `policy/explain` and decides whether what it runs must change. For a server
 * whose proxy asked for `writers` (it runs sandboxed), what other servers may write is among its
 * rules: a root another server gains over its program stops it (proxy/program-writers.ts).
 */
import type { ResolvedPolicy } from '../policies/index.js';

/** The rules of `server` in `resolved` as one comparable text. */
export function rulesText(resolved: ResolvedPolicy, server: string, writers = false): string {
  const { launch, sandbox } = resolved.launch(server);
  return JSON.stringify([
    launch ?? null,
    sandbox ?? null,
    resolved.tools(server),
    resolved.ask(server),
    writers ? resolved.writers(server) : null,
  ]);
}

/** Remembers each subscribed server's rules as last seen, and says which changed. */
export class RulesMemo {
  private readonly last = new Map<string, string>();
  /** Subscribed servers whose proxy asked for `writers`: those are compared too. */
  private readonly withWriters = new Set<string>();

  /** A server gained its first subscriber: its rules now are what that subscriber will fetch. */
  subscribed(resolved: ResolvedPolicy, server: string): void {
    if (!this.last.has(server)) this.last.set(server, rulesText(resolved, server));
  }

  /** A subscribed server's proxy asked for `writers`: from now on they are compared too. */
  askedWriters(resolved: ResolvedPolicy, server: string): void {
    if (!this.last.has(server) || this.withWriters.has(server)) return;
    this.withWriters.add(server);
    this.last.set(server, rulesText(resolved, server, true));
  }

  /** A server lost its last subscriber. */
  unsubscribed(server: string): void {
    this.last.delete(server);
    this.withWriters.delete(server);
  }

  /** The subscribed servers whose rules differ in `resolved` from the last snapshot's. */
  changed(resolved: ResolvedPolicy): string[] {
    const out: string[] = [];
    for (const [server, before] of this.last) {
      const now = rulesText(resolved, server, this.withWriters.has(server));
      if (now === before) continue;
      this.last.set(server, now);
      out.push(server);
    }
    return out;
  }
}
