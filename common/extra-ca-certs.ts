/**
 * rootsctl's, the proxy's and the daemon's start without `NODE_EXTRA_CA_CERTS`, and the variable
 * put back for their children.
 *
 * Why: Node 20 reads and parses every certificate the variable names while it starts, before any
 * script runs (40-50 ms of every start on a machine that sets it: a quarter of the 200 ms rootsctl
 * has, and part of every session a host starts through the proxy; Node 22 and later read it at the
 * first TLS connection). Neither program ever opens one. But the variable is the person's, set for
 * their whole environment on purpose, and both start programs that may need it (rootsctl:
 * `$EDITOR`, `systemctl`, the daemon, npm; the proxy: the MCP server, often through `npx`): they
 * must see it as it was.
 *
 * How: each bin begins with lines that sh runs and Node reads as strings and comments
 * (common/launcher.ts; scripts/bundle.mjs puts them there). Started as a program (npm's bin link,
 * the name on PATH, a host's `command`), sh moves the value into `CARRIER` and execs `node` from
 * PATH on the same file, as `#!/usr/bin/env node` did; Node resolves the link in "$0" and runs the
 * file as CommonJS, and `restoreExtraCaCerts` moves the value back before anything else. `node
 * dist/cli/main.js` reads no first line: Node starts with the variable, as any `node` command does.
 * The daemon starts once a login, so its start time matters little; but what Node parsed stays
 * resident for its whole life (1.5-2 MB of an idle daemon's 50: bench/FINDINGS.md), and it never
 * opens a TLS connection either (its unit allows only AF_UNIX sockets). Its bin begins with the
 * same lines, and its systemd unit, which starts Node on the bin directly, unsets the variable.
 */

/** Where the launcher carries `NODE_EXTRA_CA_CERTS` (mcp-roots' own name; never left for a child). */
export const CARRIER = 'MCP_ROOTS_NODE_EXTRA_CA_CERTS';

/** Put `NODE_EXTRA_CA_CERTS` back as the launcher found it, and the carrier away. */
export function restoreExtraCaCerts(env: NodeJS.ProcessEnv = process.env): void {
  const carried = env[CARRIER];
  if (carried === undefined) return;
  delete env[CARRIER];
  // Both set only when `node` was started on this file by hand: the person's own value stands.
  env.NODE_EXTRA_CA_CERTS ??= carried;
}
