#!/usr/bin/env node
/** The `mcp-roots-proxy` executable (issue 5). */
process.stderr.write('mcp-roots-proxy: not yet\n');
process.exitCode = 1;
