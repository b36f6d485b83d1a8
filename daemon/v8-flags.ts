/**
 * V8 settings the daemon sets on itself, first thing in its process: `daemon/bin.ts` imports this
 * module before any other, so it runs before the rest of the bundle is evaluated.
 *
 * Why here and not on Node's command line: the daemon starts as the `mcp-rootsd` bin, as
 * `node dist/daemon/main.js` (`npm start`, the README), from the unit `rootsctl install-service`
 * writes (`ExecStart=<node> <mcp-rootsd.cjs>`) and from that unit under socket activation; a flag
 * set here holds for every one of them. Only flags V8 reads while it runs take effect this way
 * (those that size the heap when the isolate is made do not, and Node refuses most V8 flags in
 * NODE_OPTIONS); bench/FINDINGS.md has which ones were measured and what each did.
 *
 * `--no-memory-reducer-for-small-heaps`: V8's memory reducer otherwise starts as soon as the old
 * generation has grown 1 MB past its size after bootstrap, before the first full collection,
 * which every start-up does. It then wakes an idle daemon every 8 s for about half a minute and
 * ends with incremental collections (about 0.1 s of CPU), with no client asking anything. After
 * real work the reducer still runs: a full collection that finds the committed heap 10 MB larger
 * than at its last run starts it as before, so memory taken by a burst is still given back.
 */
import { setFlagsFromString } from 'node:v8';

export const DAEMON_V8_FLAGS: readonly string[] = ['--no-memory-reducer-for-small-heaps'];

for (const flag of DAEMON_V8_FLAGS) setFlagsFromString(flag);
