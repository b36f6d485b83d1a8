/**
 * A link a glob matches is granted where it leads, and judged again only when the daemon sees a
 * change: in the glob's watched tree (recursively for `**`, minus `node_modules` and `.git`;
 * to the glob's depth otherwise). Before, a link could lead through what no watch sees — a link
 * or a directory outside the glob's base, a level below what a `*` glob watches, a skipped
 * `node_modules` — and a change there (re-pointed, renamed, removed) reached no update: the
 * daemon went on granting the old target while a full resolution (the next rescan, a restart)
 * granted nothing there. Each row makes such a link, changes its way, and brings the daemon's
 * resolution up to date as the daemon would: from the changes its watch plan reports, and not
 * at all when it reports none. Every server's roots must be what a full resolution gives, before
 * and after the change (now such a link is never granted, with a warning saying why); the rows
 * whose changes are seen (a loop, a deny, a swap inside the tree) must agree too.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, sep } from 'node:path';
import t from 'tap';
import {
  LinkPins,
  loadPolicySources,
  resolvePolicy,
  type PolicyContext,
  type ResolvedPolicy,
  type WatchPlan,
} from '../../policies/index.js';
import { contextFor, makeTree } from '../helpers/policy.js';

const SERVERS = ['s', 'ro'];

const isStrictlyInside = (p: string, dir: string): boolean => p.startsWith(dir + sep);

/** The changed paths a daemon with this watch plan is told of. */
function reported(plan: WatchPlan, paths: string[]): string[] {
  return paths.filter(
    (p) =>
      plan.recursive.some((r) => {
        if (!isStrictlyInside(p, r.path)) return false;
        const between = dirname(p).slice(r.path.length).split(sep).filter(Boolean);
        return !between.some((d) => r.ignore.includes(d));
      }) ||
      plan.dirs.some((d) => {
        if (!isStrictlyInside(p, d.path)) return false;
        const between = dirname(p).slice(d.path.length).split(sep).filter(Boolean);
        return between.length <= d.depth;
      }),
  );
}

/** A row: the tree's links, a change (returning the paths it changed), and what to expect. */
interface Row {
  name: string;
  make: (d: string) => void;
  change: (d: string) => string[];
  /** A second change, undoing the first. */
  back?: (d: string) => string[];
  /** Whether the daemon's watches see the change. */
  seen: boolean;
}

const ROWS: Row[] = [
  {
    name: 'a link out through a link outside the tree, re-pointed out and back',
    make: (d) => {
      symlinkSync(join(d, 'w/r/node_modules'), join(d, 'o/hop'));
      symlinkSync(join(d, 'o/hop'), join(d, 'w/r/l'));
    },
    change: (d) => {
      rmSync(join(d, 'o/hop'));
      symlinkSync(join(d, 'o/od'), join(d, 'o/hop'));
      return [join(d, 'o/hop')];
    },
    back: (d) => {
      rmSync(join(d, 'o/hop'));
      symlinkSync(join(d, 'w/r/node_modules'), join(d, 'o/hop'));
      return [join(d, 'o/hop')];
    },
    seen: false,
  },
  {
    name: 'a link through a directory outside the tree, renamed',
    // Spelled raw: `join` would take the `..` away.
    make: (d) => symlinkSync(`${d}/o/mid/../../w/r/node_modules`, join(d, 'w/r/l')),
    change: (d) => {
      renameSync(join(d, 'o/mid'), join(d, 'o/mid2'));
      return [join(d, 'o/mid'), join(d, 'o/mid2')];
    },
    seen: false,
  },
  {
    name: 'a link into a skipped node_modules, its target moved by rename',
    make: (d) => symlinkSync(join(d, 'w/r/node_modules/x'), join(d, 'w/r/l')),
    change: (d) => {
      renameSync(join(d, 'w/r/node_modules/x'), join(d, 'w/r/node_modules/y'));
      return [join(d, 'w/r/node_modules/x'), join(d, 'w/r/node_modules/y')];
    },
    seen: false,
  },
  {
    name: 'a link below the depth a * glob watches, its target replaced by a link out',
    make: (d) => symlinkSync(join(d, 'w/g/one/deep/x'), join(d, 'w/g/l')),
    change: (d) => {
      renameSync(join(d, 'w/g/one/deep/x'), join(d, 'w/g/one/deep/x.old'));
      symlinkSync(join(d, 'o/od'), join(d, 'w/g/one/deep/x'));
      return [join(d, 'w/g/one/deep/x'), join(d, 'w/g/one/deep/x.old')];
    },
    seen: false,
  },
  {
    name: 'a link whose target is swapped from inside to outside, by a link in the tree',
    make: (d) => {
      symlinkSync(join(d, 'w/r/a'), join(d, 'w/r/hop'));
      symlinkSync(join(d, 'w/r/hop'), join(d, 'w/r/l'));
    },
    change: (d) => {
      rmSync(join(d, 'w/r/hop'));
      symlinkSync(join(d, 'o/od'), join(d, 'w/r/hop'));
      return [join(d, 'w/r/hop')];
    },
    seen: true,
  },
  {
    name: 'a link to a denied directory, then a loop',
    make: (d) => symlinkSync(join(d, 'w/r/a/docs'), join(d, 'w/r/l')),
    change: (d) => {
      rmSync(join(d, 'w/r/l'));
      symlinkSync(join(d, 'w/r/l2'), join(d, 'w/r/l'));
      symlinkSync(join(d, 'w/r/l'), join(d, 'w/r/l2'));
      return [join(d, 'w/r/l'), join(d, 'w/r/l2')];
    },
    seen: true,
  },
];

for (const row of ROWS) {
  void t.test(row.name, async (t) => {
    const dir = t.testdir({});
    makeTree(dir, [
      'home/',
      'o/od/',
      'o/mid/',
      'w/g/one/deep/x/',
      'w/g/two/',
      'w/r/a/docs/',
      'w/r/node_modules/x/',
    ]);
    row.make(dir);
    const config = join(dir, 'mcp-roots.yaml');
    writeFileSync(
      config,
      [
        'version: 1',
        'servers:',
        '  s:',
        '    roots:',
        `      - path: ${dir}/w/g/*`,
        '  ro:',
        '    readOnly: true',
        '    roots:',
        `      - path: ${dir}/w/r/**`,
        '    deny:',
        '      - path: "**/docs"',
        '',
      ].join('\n'),
    );
    const ctx = (): PolicyContext => contextFor(dir, { now: Date.now() });
    const files = (await loadPolicySources(config, ctx())).files;
    const pinsInc = new LinkPins();
    const pinsFull = new LinkPins();
    let daemon: ResolvedPolicy = await resolvePolicy(files, ctx(), { pins: pinsInc });
    await resolvePolicy(files, ctx(), { pins: pinsFull });
    const same = async (when: string) => {
      const full = await resolvePolicy(files, ctx(), { pins: pinsFull });
      for (const s of SERVERS) t.same(daemon.roots(s), full.roots(s), `${when}: ${s}'s roots`);
    };
    await same('before the change');
    const told = reported(daemon.watchPlan, row.change(dir));
    t.equal(told.length > 0, row.seen, row.seen ? 'the daemon sees it' : 'no watch sees it');
    if (told.length > 0)
      daemon = await resolvePolicy(files, ctx(), {
        pins: pinsInc,
        previous: daemon,
        changed: told,
      });
    await same('after the change');
    if (!row.seen) {
      t.match(
        daemon.warnings.map((w) => w.message).join('\n'),
        /w\/[rg]\/l is a symlink that leads through a path outside what the daemon watches/,
        'the link is not granted, and a warning says why',
      );
    }
    if (row.back) {
      const again = reported(daemon.watchPlan, row.back(dir));
      if (again.length > 0)
        daemon = await resolvePolicy(files, ctx(), {
          pins: pinsInc,
          previous: daemon,
          changed: again,
        });
      await same('after the change back');
    }
    mkdirSync(join(dir, 'w/r/a/new'));
    daemon = await resolvePolicy(files, ctx(), {
      pins: pinsInc,
      previous: daemon,
      changed: [join(dir, 'w/r/a/new')],
    });
    await same('after a later change the daemon sees');
  });
}
