/**
 * Loaded into every test process before the test (package.json's `tap.node-arg`). tap puts its
 * process tracker into NODE_OPTIONS so that every node child of a test loads it too; it serves
 * coverage, which this suite does not collect, and costs each child about 0.3 s of CPU at start.
 * The tests start several hundred children (daemons, proxies, servers, rootsctl), so the tracker
 * is taken out of NODE_OPTIONS here; the test process itself keeps it, as tap expects.
 */
const TRACKER = /--(?:import|loader)=\S*@tapjs\/processinfo\S*/g;

const options = process.env.NODE_OPTIONS;
if (options !== undefined) {
  const rest = options.replace(TRACKER, '').trim();
  if (rest) process.env.NODE_OPTIONS = rest;
  else delete process.env.NODE_OPTIONS;
}
