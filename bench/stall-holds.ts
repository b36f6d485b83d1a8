/**
 * The stall benchmark's cause, measured in one process: how long one recompute of B's large
 * `**` root holds the event loop. The daemon's state on the same tree as `stall.ts`
 * (`STALL_FOLDERS`, default 30,000), one subscriber's push encoded per change, then
 * `HOLDS_RECOMPUTES` (20) rounds of one `mkdir` and one recompute by that path. A 1 ms timer's
 * lateness during each recompute is its longest hold: what a check arriving then would wait.
 * Run it beside `stall.ts` (and under `--cpu-prof`) to see which function a hold is made of,
 * without the noise of three processes. Target: a recompute holds the loop at most a few ms.
 */
import { mkdirSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PolicyState } from '../daemon/state.js';
import { nodeFs } from '../policies/index.js';
import { encodeNotification } from '../protocol/connection.js';
import { rawJsonBytes } from '../protocol/raw-json.js';
import { makeDirTree, report, summary, tempDir } from './common.js';

const FOLDERS = Number(process.env.STALL_FOLDERS ?? 30_000);
const RECOMPUTES = Number(process.env.HOLDS_RECOMPUTES ?? 20);
/** What "a few milliseconds" allows. */
const ALLOWED_MS = 5;

const dir = realpathSync(tempDir());
const b = join(dir, 'b');
makeDirTree(b, FOLDERS, { prefix: 'd', perGroup: 300, groupPrefix: 'p' });
mkdirSync(join(b, 'churn'));
mkdirSync(join(dir, 'a', 'work'), { recursive: true });
const config = join(dir, 'mcp-roots.yaml');
writeFileSync(
  config,
  `version: 1\nservers:\n  a:\n    roots:\n      - path: ${dir}/a\n  b:\n    roots:\n      - path: ${b}/**\n`,
);
const quiet = () => {};
const state = new PolicyState({
  configFile: config,
  grantsFile: join(dir, 'grants.yaml'),
  stateDir: join(dir, 'state'),
  runtimeDir: join(dir, 'run'),
  home: dir,
  env: {},
  fs: nodeFs(),
  log: {
    error: console.error,
    warn: quiet,
    info: quiet,
    debug: quiet,
    flush: () => Promise.resolve(),
  },
});
let pushes = 0;
// As the daemon's push does: the line encoded once from the list's pieces.
state.on('changed', (revision, changes) => {
  for (const c of changes) {
    encodeNotification(
      'notifications/roots/list_changed',
      rawJsonBytes<never>([`{"server":"b","revision":${revision},"roots":`, ...c.parts, '}']),
    );
    pushes++;
  }
});

let ok: boolean;
try {
  await state.start();
  state.subscribe('b');
  const first = state.roots('b').length;
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  const holds: number[] = [];
  const walls: number[] = [];
  for (let i = 0; i < RECOMPUTES; i++) {
    const path = join(b, 'churn', `c${i}`);
    mkdirSync(path);
    await new Promise((r) => setTimeout(r, 20));
    last = performance.now();
    longest = 0;
    const t0 = performance.now();
    await state.recompute('bench', true, [path]);
    walls.push(performance.now() - t0);
    // The timer's next firing, to count a hold at the recompute's very end.
    await new Promise((r) => setTimeout(r, 5));
    holds.push(longest);
  }
  clearInterval(timer);
  const h = summary(holds);
  const w = summary(walls);
  const roots = state.roots('b').length;
  ok = report(
    'stall-holds',
    { folders: FOLDERS, recomputes: RECOMPUTES, pushes, holdMs: h, recomputeMs: w, first, roots },
    [
      [
        `a one-path recompute over ${first} roots holds the loop p50 ${h.p50} ms (max ${h.max}) <= ${ALLOWED_MS} ms`,
        h.p50 <= ALLOWED_MS,
      ],
      [`B's list follows: ${roots} of ${first + RECOMPUTES} roots`, roots === first + RECOMPUTES],
    ],
  );
} finally {
  await state.close();
  rmSync(dir, { recursive: true, force: true });
}
process.exitCode = ok ? 0 : 1;
