/**
 * Loaded into every test process before the test (package.json's `tap.node-arg`). tap's process
 * tracker (@tapjs/processinfo) serves coverage, which this suite does not collect, and it follows
 * every node child of a test: it puts itself into NODE_OPTIONS and, through process-on-spawn, into
 * the environment of every process the test starts, even one given an environment of its own.
 * In a child it costs 0.1 s (Node 24) to 0.5 s (Node 20, 22: its hooks run on a thread of their
 * own) of CPU at start, and more for every module loaded: a proxy in front of the filesystem
 * server took 3.3 s of CPU instead of 1.2 s on Node 20. The tests start hundreds of children
 * (daemons, proxies, servers, rootsctl, npm), so the children are kept free of it here. The test process itself
 * keeps it, as tap expects. The listener below runs after the tracker's own (it was added
 * later), so it sees and removes what the tracker put in.
 */
import processOnSpawn from 'process-on-spawn';

/** The tracker's `--import=…` or `--loader=…`, quoted or not, in a NODE_OPTIONS value. */
const TRACKER = /"?--(?:import|loader)=[^\s"]*@tapjs\/processinfo[^\s"]*"?/g;

/** `options` without the tracker; undefined when nothing else is left. */
function untracked(options: string | undefined): string | undefined {
  const rest = options?.replace(TRACKER, '').trim();
  return rest ? rest : undefined;
}

function dropTracker(env: NodeJS.ProcessEnv): void {
  if (env.NODE_OPTIONS === undefined) return;
  const rest = untracked(env.NODE_OPTIONS);
  if (rest === undefined) delete env.NODE_OPTIONS;
  else env.NODE_OPTIONS = rest;
}

dropTracker(process.env);
processOnSpawn.addListener((opts) => {
  const env = { ...opts.env };
  dropTracker(env);
  opts.env = env;
});
