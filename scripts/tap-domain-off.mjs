// async-hook-domain's `Domain` as the test processes' tap bundle has it (scripts/bundle-test-deps.mjs,
// the CommonJS bundle that scripts/run-tests.mjs loads): the same class, without its async hook.
//
// tap makes a Domain for every test and subtest so that an error thrown from a callback the test
// left behind (a timer, an event handler) fails the subtest that made it, and the file goes on. The
// package does it with an async_hooks hook whose `init` and `destroy` run for every async resource
// of the process, and enabling any such hook makes Node track every promise too: 1 to 1.7 s of CPU
// in a test file that runs a daemon or a policy watch in its own process (deny-stale, grants,
// incremental: 13–20% of the file's CPU), a cost every test process paid though in a passing run no
// domain ever catches anything. Without it, such an error is what it is in any Node program: an
// uncaught exception, or an unhandled rejection, that ends the process with its stack on stderr.
// The file still fails (run-tests prints its output, the exit status and tap's lines for the
// subtests left open); only the name of the subtest the error came from is no longer said.
// `npx tap` and the files that mock modules load tap's ES module bundle, with the package's own.
export class Domain {
  destroyed = false;

  constructor(onerror) {
    this.onerror = onerror;
  }

  destroy() {
    this.destroyed = true;
  }
}
