/**
 * The supervisor's first plan reads the roots and rules as they are when the server starts, so a
 * change that came before (the daemon's first list always does: the link reports it as a change)
 * must not make it plan again once the session runs. It did, 100 ms in: a walk of a sandboxed
 * server's roots for nothing, and a restart, or a stand-in while the daemon was away, whenever the
 * new plan differed (test/hardening/sandbox-new-denied.test.ts and sandbox-daemon-socket.test.ts
 * failed that way under load). A change that comes while the first plan is made is still followed.
 */
import t from 'tap';
import type { PlanInput } from '../../proxy/launch-plan.js';
import type { SwapPlan } from '../../proxy/server-swap.js';
import { Supervisor } from '../../proxy/supervisor.js';

const SETTLE_MS = 20;
const quiet = { error() {}, warn() {}, info() {}, debug() {} };
const change = { added: ['file:///w'], removed: [], reconnected: false };

/** A supervisor of a real idle process; counts its plans and restarts. */
function supervised(onPlan: (n: number, s: Supervisor) => void = () => {}) {
  const counts = { plans: 0, swaps: 0 };
  const input = (): PlanInput => ({
    options: {
      server: 's',
      sandbox: false,
      env: [],
      cwd: undefined,
      command: process.execPath,
      args: ['-e', 'setInterval(() => {}, 1e9)'],
    },
    roots: [{ uri: 'file:///w', name: 'w', _meta: { 'mcp-roots/readOnly': false } }],
    launch: undefined,
    sandbox: undefined,
    writers: [],
    env: { PATH: process.env.PATH },
    home: '/nonexistent',
    cwd: process.cwd(),
    daemonSocket: undefined,
    sandboxSupport: () => Promise.reject(new Error('no sandbox here')),
  });
  const s: Supervisor = new Supervisor({
    server: 's',
    version: '0',
    log: quiet,
    settleMs: SETTLE_MS,
    planInput: () => {
      onPlan(++counts.plans, s);
      return input();
    },
  });
  const router = {
    swapServer: (_plan: SwapPlan): Promise<void> => {
      counts.swaps++;
      return Promise.resolve();
    },
  };
  return { s, counts, router };
}

const settled = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS * 5));

void t.test('a change before the start is in the first plan: no second plan', async (t) => {
  const { s, counts, router } = supervised();
  t.teardown(() => s.stop());
  s.onRoots(change);
  s.onRules();
  await s.start();
  s.follow(router);
  await settled();
  t.equal(counts.plans, 1, 'planned once');
  t.equal(counts.swaps, 0, 'not restarted');

  s.onRoots(change);
  await settled();
  t.equal(counts.plans, 2, 'a change after the start is planned for');
  t.equal(counts.swaps, 0, 'the same plan: not restarted');
});

void t.test('a change while the first plan is made is followed', async (t) => {
  const { s, counts, router } = supervised((n, sup) => {
    if (n === 1) sup.onRoots(change);
  });
  t.teardown(() => s.stop());
  await s.start();
  s.follow(router);
  await settled();
  t.equal(counts.plans, 2, 'planned again once the session runs');
});
