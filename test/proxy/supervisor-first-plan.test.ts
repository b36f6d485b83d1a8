/**
 * The supervisor's first plan reads the roots and rules as they are when the server starts, so a
 * change that came before (the daemon's first list always does: the link reports it as a change)
 * must not make it plan again once the session runs. It did, 100 ms in: a walk of a sandboxed
 * server's roots for nothing, and a restart, or a stand-in while the daemon was away, whenever the
 * new plan differed (test/hardening/sandbox-new-denied.test.ts and sandbox-daemon-socket.test.ts
 * failed that way under load). A change that comes while the first plan is made is still followed.
 */
import t from 'tap';
import type { Root } from '../../common/types.js';
import type { PlanInput } from '../../proxy/launch-plan.js';
import { rootsAt } from '../../proxy/root-expiry.js';
import type { SwapPlan } from '../../proxy/server-swap.js';
import { Supervisor } from '../../proxy/supervisor.js';

const SETTLE_MS = 20;
const quiet = { error() {}, warn() {}, info() {}, debug() {} };

const W: Root = { uri: 'file:///w', name: 'w', _meta: { 'mcp-roots/readOnly': false } };

/**
 * A supervisor of a real idle process on `roots` (as run.ts gives them, read at each plan) and
 * `args`; counts its plans and restarts, and keeps what it logs as info.
 */
function supervised(
  onPlan: (n: number, s: Supervisor) => void = () => {},
  roots: Root[] = [W],
  args = ['-e', 'setInterval(() => {}, 1e9)'],
) {
  const counts = { plans: 0, swaps: 0 };
  const infos: string[] = [];
  const input = (): PlanInput => ({
    options: {
      server: 's',
      sandbox: false,
      env: [],
      cwd: undefined,
      command: process.execPath,
      args,
    },
    roots: rootsAt(roots, Date.now()),
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
    log: { ...quiet, info: (m: string) => infos.push(m) },
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
  return { s, counts, router, infos };
}

const settled = () => new Promise((resolve) => setTimeout(resolve, SETTLE_MS * 5));

void t.test('a change before the start is in the first plan: no second plan', async (t) => {
  const { s, counts, router } = supervised();
  t.teardown(() => s.stop());
  s.onRoots();
  s.onRules();
  await s.start();
  s.follow(router);
  await settled();
  t.equal(counts.plans, 1, 'planned once');
  t.equal(counts.swaps, 0, 'not restarted');

  s.onRoots();
  await settled();
  t.equal(counts.plans, 2, 'a change after the start is planned for');
  t.equal(counts.swaps, 0, 'the same plan: not restarted');
});

void t.test('a change while the first plan is made is followed', async (t) => {
  const { s, counts, router } = supervised((n, sup) => {
    if (n === 1) sup.onRoots();
  });
  t.teardown(() => s.stop());
  await s.start();
  s.follow(router);
  await settled();
  t.equal(counts.plans, 2, 'planned again once the session runs');
});

void t.test(
  'a root that expires where nothing started depends on it: planned once more',
  async (t) => {
    // The plan of a server without a sandbox or `{roots}` is the same without the root; the
    // expiry must not leave the root's time on the running plan, or it is planned again at once,
    // for ever.
    const expires = new Date(Date.now() + 500).toISOString();
    const expiring = { ...W, _meta: { ...W._meta, 'mcp-roots/expiresAt': expires } };
    const { s, counts, router } = supervised(undefined, [expiring]);
    t.teardown(() => s.stop());
    await s.start();
    s.follow(router);
    await new Promise((resolve) => setTimeout(resolve, Date.parse(expires) - Date.now()));
    await settled();
    t.equal(counts.plans, 2, 'the first plan, and one at the expiry');
    t.equal(counts.swaps, 0, 'the same plan: not restarted');
  },
);

void t.test('a restart says what the new plan adds to the running one', async (t) => {
  // After a reconnect every root of the daemon's list is new to the link: the reason listed
  // them all as added (an attacker pass saw "+g/a, +keep" for a root turned read-only).
  const roots = [W];
  const args = ['-e', 'setInterval(() => {}, 1e9)', '{roots}'];
  const { s, router, infos } = supervised(undefined, roots, args);
  t.teardown(() => s.stop());
  await s.start();
  s.follow(router);
  roots.push({ uri: 'file:///x', name: 'x', _meta: { 'mcp-roots/readOnly': false } });
  s.onRoots();
  await settled();
  t.same(
    infos.filter((m) => m.startsWith('restarting')),
    ['restarting the server: its roots changed (+/x)'],
  );
});
