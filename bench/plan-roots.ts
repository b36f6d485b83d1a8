/**
 * What each watch plan spends on the roots (daemon/watch-root-places.ts): where 1,000 root
 * directories eight levels down lead, 100 of them through a link, and the links on the way to
 * them. It runs after every resolution, so after every directory change under a root. Beside it,
 * in turns: the floor, one `realpath` of each directory (the least that tells where each
 * leads), and the walk of every directory level by level, as plans did before.
 */
import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { lstat, readlink, realpath } from 'node:fs/promises';
import { join } from 'node:path';
import { linksOnTheWay } from '../common/links-on-the-way.js';
import { rootPlaces } from '../daemon/watch-root-places.js';
import { report, summary, tempDir } from './common.js';

const ROOTS = Number(process.env.PLAN_ROOTS ?? 1000);
const LINKED = Math.floor(ROOTS / 10);
const RUNS = Number(process.env.PLAN_RUNS ?? 15);

const base = tempDir();
const projects = join(base, 'home', 'user', 'work', 'projects');
for (let i = 0; i < ROOTS; i++) mkdirSync(join(projects, `p${i}`, 'src'), { recursive: true });
symlinkSync(projects, join(base, 'home', 'user', 'linked'));
const dirs = Array.from({ length: ROOTS }, (_, i) =>
  i < LINKED
    ? join(base, 'home', 'user', 'linked', `p${i}`, 'src')
    : join(projects, `p${i}`, 'src'),
);
const plain = dirs.map((d, i) => (i < LINKED ? join(projects, `p${i}`, 'src') : d));

const time = async (f: () => Promise<unknown>) => {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
};

/** The plan's part for `roots`, beside the floor and the old walk, in turns. */
async function measure(roots: string[]) {
  const plan = { dirs: roots.map((path) => ({ path, depth: 0 })), recursive: [] };
  const samples = { places: [] as number[], floor: [] as number[], walkAll: [] as number[] };
  let links = 0;
  for (let run = 0; run < RUNS + 2; run++) {
    const places = await time(async () => {
      links = (await rootPlaces(plan)).links.size;
    });
    const floor = await time(() => Promise.all(roots.map((d) => realpath(d))));
    const walkAll = await time(() =>
      Promise.all(roots.map((d) => linksOnTheWay(d, { lstat, readlink }))),
    );
    if (run < 2) continue; // warm-up
    samples.places.push(places);
    samples.floor.push(floor);
    samples.walkAll.push(walkAll);
  }
  const places = summary(samples.places);
  const floor = summary(samples.floor);
  const ratio = Math.round((places.p50 / floor.p50) * 100) / 100;
  return { links, places, floor, walkAll: summary(samples.walkAll), ratio };
}

const none = await measure(plain);
const some = await measure(dirs);
rmSync(base, { recursive: true, force: true });

const line = (what: string, m: typeof none, most: number): [string, boolean] => [
  `${what}: ${m.places.p50} ms at p50 ≤ ${most} × ${ROOTS} realpaths ${m.floor.p50} ms (${m.ratio}×; walking every level, as before: ${m.walkAll.p50} ms)`,
  m.ratio <= most,
];
// Through a link, a root is walked level by level (each level asked once for all of them).
const ok = report('plan-roots', { roots: ROOTS, linked: LINKED, none, some }, [
  line(`${ROOTS} roots, no link on the way`, none, 2),
  line(`${ROOTS} roots, ${LINKED} of them through a link`, some, 3),
]);
process.exitCode = ok ? 0 : 1;
