/**
 * The first lines of the bins (`dist/cli/rootsctl.cjs`, `dist/proxy/mcp-roots-proxy.cjs`,
 * `dist/daemon/mcp-rootsd.cjs`), in place of `#!/usr/bin/env node` (scripts/bundle.mjs writes
 * them; common/extra-ca-certs.ts says why). A module of its own, which the bins do not import: the
 * text is not in a bundle twice.
 */
import { CARRIER } from './extra-ca-certs.js';

/**
 * The bin's first lines, for `program`. For sh: one `:` command (a no-op) then the work, on each
 * line; set but empty is carried as empty, and an unset variable leaves no carrier (not even one
 * the environment had). `exec`: the process the caller started becomes Node, so the exit code and
 * the signals are the program's own. "$@" passes every argument as it came. sh finds no link to
 * read: "$0" is the path it was started by (npm's link), and Node resolves that itself (no
 * `readlink`, which cost a fork and an exec, about 5 ms: bench/FINDINGS.md). For Node: two strings,
 * each followed by a comment; they stand before the bundle's 'use strict', which stays in force.
 */
export function launcher(program: string): string {
  return `#!/bin/sh
":" //; if [ "\${NODE_EXTRA_CA_CERTS+set}" ]; then export ${CARRIER}="$NODE_EXTRA_CA_CERTS"; unset NODE_EXTRA_CA_CERTS; else unset ${CARRIER}; fi
":" //; exec node -- "$0" "$@"
/* ${program}. Started as a program, sh runs the two lines above: Node starts without
   NODE_EXTRA_CA_CERTS (Node 20 parses its certificates at every start; ${program} speaks no TLS)
   and ${program} puts it back from ${CARRIER} first thing, for the programs it starts.
   For Node they are strings and comments. Source: common/launcher.ts. */
`;
}
