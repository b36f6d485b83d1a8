/**
 * docs/policy.md "Symlinks": every cell of the table of link kinds x times, the rule for links a
 * glob matches, and the rule that a link never yields `/` or the home. Each row resolves a real
 * fixture tree once (the load), changes it, and resolves again with the same pins (what the
 * daemon does after a directory event); then once more with the pins cleared (a reload).
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import { LinkPins } from '../../policies/anchor.js';
import { loadPolicySources, resolvePolicy, type ResolvedPolicy } from '../../policies/index.js';
import { contextFor, makeTree } from '../helpers/policy.js';

interface Row {
  name: string;
  /** The tree at load (directories end in `/`). */
  tree: string[];
  atLoad?: (dir: string) => void;
  /** What changes after the load (an agent, a clone, a person). */
  later?: (dir: string) => void;
  /** Root entries of server `s`, relative to the fixture dir. */
  entries: string[];
  /** Roots of `s`, relative to the fixture dir, after the load. */
  loaded: string[];
  /** ...after the change, resolved with the load's pins. */
  after?: string[];
  /** ...after the change, with the pins cleared (`rootsctl reload`); defaults to `after`. */
  reloaded?: string[];
  /** A warning that must be present after the change. */
  warns?: RegExp;
  /** Paths (relative) that the access decision must refuse after the change. */
  refused?: string[];
}

const link = (dir: string, target: string, at: string) => {
  mkdirSync(join(dir, at, '..'), { recursive: true });
  symlinkSync(target.startsWith('/') ? target : join(dir, target), join(dir, at));
};
const replaceWithLink = (dir: string, target: string, at: string) => {
  renameSync(join(dir, at), join(dir, `${at}.moved`));
  link(dir, target, at);
};

const BASE = ['home/', 'work/', 'elsewhere/shared/f', 'elsewhere/mirrors/m1/f', 'other/o/f'];

/** Rows: link kind (plain root, its ancestor, glob base, its ancestor) x time. */
const TIMES: Row[] = [
  // the root itself is a link
  {
    name: 'root is a link present at load: followed',
    tree: BASE,
    atLoad: (d) => link(d, 'elsewhere/shared', 'work/shared'),
    entries: ['work/shared'],
    loaded: ['elsewhere/shared'],
    after: ['elsewhere/shared'],
  },
  {
    name: 'root was a real directory, replaced by a link later: not followed',
    tree: [...BASE, 'work/shared/f'],
    later: (d) => replaceWithLink(d, 'other', 'work/shared'),
    entries: ['work/shared'],
    loaded: ['work/shared'],
    after: [],
    reloaded: ['other'],
    warns: /work\/shared now leads to .*other.*not followed/,
    refused: ['work/shared/o/f', 'other/o/f'],
  },
  {
    name: 'root was missing at load, created later as a link: not followed',
    tree: BASE,
    later: (d) => link(d, 'other', 'work/shared'),
    entries: ['work/shared'],
    loaded: [],
    after: [],
    reloaded: ['other'],
    warns: /not followed/,
    refused: ['work/shared/o/f'],
  },
  {
    name: 'root was missing at load, created later as a directory: listed (control)',
    tree: BASE,
    later: (d) => mkdirSync(join(d, 'work/shared')),
    entries: ['work/shared'],
    loaded: [],
    after: ['work/shared'],
  },
  {
    name: 'root is a link present at load, re-pointed later: not followed',
    tree: BASE,
    atLoad: (d) => link(d, 'elsewhere/shared', 'work/shared'),
    later: (d) => {
      rmSync(join(d, 'work/shared'));
      link(d, 'other', 'work/shared');
    },
    entries: ['work/shared'],
    loaded: ['elsewhere/shared'],
    after: [],
    reloaded: ['other'],
    warns: /now leads to .*other, not .*elsewhere\/shared/,
    refused: ['work/shared/o/f', 'other/o/f'],
  },
  {
    name: 'root is a dangling link at load that later gains a target: followed where pinned',
    tree: BASE,
    atLoad: (d) => link(d, 'elsewhere/later', 'work/shared'),
    later: (d) => mkdirSync(join(d, 'elsewhere/later')),
    entries: ['work/shared'],
    loaded: [],
    after: ['elsewhere/later'],
  },
  // an ancestor of the root is a link
  {
    name: 'ancestor of a root is a link present at load: followed',
    tree: [...BASE, 'real-work/shared/f'],
    atLoad: (d) => {
      rmSync(join(d, 'work'), { recursive: true });
      link(d, 'real-work', 'work');
    },
    entries: ['work/shared'],
    loaded: ['real-work/shared'],
    after: ['real-work/shared'],
  },
  {
    name: 'ancestor of a root replaced by a link later: not followed',
    tree: [...BASE, 'work/shared/f', 'evil/shared/f'],
    later: (d) => replaceWithLink(d, 'evil', 'work'),
    entries: ['work/shared'],
    loaded: ['work/shared'],
    after: [],
    reloaded: ['evil/shared'],
    warns: /now leads to .*evil\/shared/,
    refused: ['work/shared/f', 'evil/shared/f'],
  },
  {
    name: 'ancestor of a missing root created later as a link: not followed',
    tree: [...BASE, 'evil/shared/f'],
    later: (d) => link(d, 'evil', 'work/deep'),
    entries: ['work/deep/shared'],
    loaded: [],
    after: [],
    reloaded: ['evil/shared'],
    refused: ['work/deep/shared/f'],
  },
  {
    name: 'ancestor link present at load, re-pointed later: not followed',
    tree: [...BASE, 'a/shared/f', 'b/shared/f'],
    atLoad: (d) => link(d, 'a', 'work/cur'),
    later: (d) => {
      rmSync(join(d, 'work/cur'));
      link(d, 'b', 'work/cur');
    },
    entries: ['work/cur/shared'],
    loaded: ['a/shared'],
    after: [],
    reloaded: ['b/shared'],
    refused: ['work/cur/shared/f', 'b/shared/f'],
  },
  // the glob base is a link
  {
    name: 'glob base is a link present at load: followed',
    tree: BASE,
    atLoad: (d) => link(d, 'elsewhere/mirrors', 'work/mirrors'),
    entries: ['work/mirrors/*'],
    loaded: ['elsewhere/mirrors/m1'],
    after: ['elsewhere/mirrors/m1'],
  },
  {
    name: 'glob base was a real directory, replaced by a link later: not followed',
    tree: [...BASE, 'work/mirrors/m0/f'],
    later: (d) => replaceWithLink(d, 'other', 'work/mirrors'),
    entries: ['work/mirrors/*'],
    loaded: ['work/mirrors/m0'],
    after: [],
    reloaded: ['other/o'],
    warns: /work\/mirrors now leads to .*other.*not followed/,
    refused: ['work/mirrors/o/f', 'other/o/f'],
  },
  {
    name: 'glob base missing at load, created later as a link: not followed',
    tree: BASE,
    later: (d) => link(d, 'other', 'work/mirrors'),
    entries: ['work/mirrors/*'],
    loaded: [],
    after: [],
    reloaded: ['other/o'],
    refused: ['work/mirrors/o/f'],
  },
  {
    name: 'glob base missing at load, created later as a directory: matches (control)',
    tree: BASE,
    later: (d) => makeTree(d, ['work/mirrors/m2/']),
    entries: ['work/mirrors/*'],
    loaded: [],
    after: ['work/mirrors/m2'],
  },
  {
    name: 'glob base is a link present at load, re-pointed later: not followed',
    tree: BASE,
    atLoad: (d) => link(d, 'elsewhere/mirrors', 'work/mirrors'),
    later: (d) => {
      rmSync(join(d, 'work/mirrors'));
      link(d, 'other', 'work/mirrors');
    },
    entries: ['work/mirrors/*'],
    loaded: ['elsewhere/mirrors/m1'],
    after: [],
    reloaded: ['other/o'],
    refused: ['work/mirrors/o/f'],
  },
  {
    name: 'a link named like the glob itself, created later: not taken literally',
    tree: [...BASE, 'work/mirrors/m0/'],
    later: (d) => link(d, 'other', 'work/mirrors/*'),
    entries: ['work/mirrors/*'],
    loaded: ['work/mirrors/m0'],
    after: [],
    reloaded: ['other'],
    refused: ['work/mirrors/*/o/f', 'other/o/f'],
  },
  // an ancestor of the glob base is a link
  {
    name: 'ancestor of a glob base is a link present at load: followed',
    tree: [...BASE, 'real-work/mirrors/m1/'],
    atLoad: (d) => {
      rmSync(join(d, 'work'), { recursive: true });
      link(d, 'real-work', 'work');
    },
    entries: ['work/mirrors/*'],
    loaded: ['real-work/mirrors/m1'],
    after: ['real-work/mirrors/m1'],
  },
  {
    name: 'ancestor of a glob base replaced by a link later (a monorepo clone): not followed',
    tree: [...BASE, 'repos/app/packages/p1/', 'repos/app/secret/f'],
    later: (d) => {
      rmSync(join(d, 'repos/app'), { recursive: true });
      makeTree(d, ['repos/app/secret/f']);
      link(d, 'repos/app', 'repos/app/packages');
    },
    entries: ['repos/app/packages/*'],
    loaded: ['repos/app/packages/p1'],
    after: [],
    refused: ['repos/app/secret/f'],
  },
  {
    name: 'glob base that is a link up to its own parent at load (packages -> ..): not followed',
    tree: [...BASE, 'repos/app/secret/f'],
    atLoad: (d) => symlinkSync('..', join(d, 'repos/app/packages')),
    entries: ['repos/app/packages/*'],
    loaded: [],
    warns: /up to .*\/repos, which holds it/,
    refused: ['repos/app/secret/f', 'repos/app/packages/secret/f'],
  },
];

/** Matched links (class: a link a glob matches must lead to what the glob itself grants). */
const MATCHED: Row[] = [
  ['evil/docs -> .. (the base itself)', '..'],
  ['evil/docs -> ../.. (above the base)', '../..'],
  ['evil/docs -> ../other (a repository, not a docs directory)', '../other'],
  ['evil/docs -> ../.hidden/docs (a dot directory * skips)', '../.hidden/docs'],
  ['evil/docs -> / ', '/'],
  ['evil/docs -> the home', 'HOME'],
  ['evil/docs -> . (itself: the repository)', '.'],
].map(([name, target]): Row => ({
  name: `${name}: dropped`,
  tree: ['home/', 'repos/good/docs/f', 'repos/other/f', 'repos/.hidden/docs/f', 'repos/evil/'],
  later: (d) =>
    symlinkSync(target === 'HOME' ? join(d, 'home') : target!, join(d, 'repos/evil/docs')),
  entries: ['repos/*/docs'],
  loaded: ['repos/good/docs'],
  after: ['repos/good/docs'],
  warns: /evil\/docs is a symlink that leads outside what the glob matches/,
  refused: ['repos/other/f', 'repos/.hidden/docs/f', 'repos/evil/docs/f', 'home/f'],
}));
MATCHED.push(
  {
    name: 'evil/docs -> ../other/docs (granted by the glob anyway): kept',
    tree: ['home/', 'repos/good/docs/f', 'repos/other/docs/sub/f', 'repos/evil/'],
    later: (d) => symlinkSync('../other/docs/sub', join(d, 'repos/evil/docs')),
    entries: ['repos/*/docs'],
    loaded: ['repos/good/docs', 'repos/other/docs'],
    after: ['repos/good/docs', 'repos/other/docs', 'repos/other/docs/sub'],
  },
  {
    name: '** glob: a/docs -> ../.. dropped, b/docs -> ../c/docs kept',
    tree: ['home/', 'repos/a/', 'repos/b/', 'repos/c/docs/f', 'repos/x/y/docs/'],
    later: (d) => {
      symlinkSync('../..', join(d, 'repos/a/docs'));
      symlinkSync('../c/docs', join(d, 'repos/b/docs'));
    },
    entries: ['repos/**/docs'],
    loaded: ['repos/c/docs', 'repos/x/y/docs'],
    after: ['repos/c/docs', 'repos/x/y/docs'],
    warns: /a\/docs is a symlink that leads outside/,
    refused: ['repos/a/docs/c/docs/f'],
  },
  {
    name: 'repos/* with a link to its own base: dropped; to a sibling: kept',
    tree: ['home/', 'repos/good/f'],
    later: (d) => {
      symlinkSync('.', join(d, 'repos/self'));
      symlinkSync('good', join(d, 'repos/alias'));
    },
    entries: ['repos/*'],
    loaded: ['repos/good'],
    after: ['repos/good'],
    warns: /self is a symlink that leads outside/,
    refused: ['repos/self/good/../f'],
  },
);

/** A link never yields `/`, the home or an ancestor of it; writing those paths does. */
const TOP: Row[] = [
  {
    name: 'glob base that is a link to / at load: nothing, not every top-level directory',
    tree: ['home/'],
    atLoad: (d) => link(d, '/', 'sys'),
    entries: ['sys/*'],
    loaded: [],
    warns: /sys leads through a symlink to \/;/,
    refused: ['/etc/hostname', 'sys/etc/hostname'],
  },
  {
    name: 'root that is a link to the home at load: nothing',
    tree: ['home/f'],
    atLoad: (d) => link(d, 'home', 'h'),
    entries: ['h'],
    loaded: [],
    warns: /leads through a symlink to .*home; a link never yields/,
    refused: ['home/f', 'h/f'],
  },
  {
    name: 'glob base that is a link to an ancestor of the home: nothing',
    tree: ['home/f'],
    atLoad: (d) => link(d, '.', 'up'),
    entries: ['up/*'],
    loaded: [],
    refused: ['home/f'],
  },
  {
    name: 'the home written as a path: listed',
    tree: ['home/f'],
    entries: ['home'],
    loaded: ['home'],
  },
];

async function resolveAt(dir: string, pins: LinkPins): Promise<ResolvedPolicy> {
  const ctx = contextFor(dir);
  const sources = await loadPolicySources(join(dir, 'mcp-roots.yaml'), ctx);
  if (sources.errors.length > 0) throw new Error(JSON.stringify(sources.errors));
  return resolvePolicy(sources.files, ctx, { pins });
}

/** Roots of `s` relative to the fixture dir (absolute when outside it). */
function rootsOf(r: ResolvedPolicy, dir: string): string[] {
  return r.roots('s').map((root) => {
    const p = fileURLToPath(root.uri);
    return p.startsWith(`${dir}/`) ? p.slice(dir.length + 1) : p;
  });
}

/** The list and the decision are one computation: every listed root is readable by check. */
async function listAgreesWithCheck(t: Test, r: ResolvedPolicy, when: string) {
  for (const root of r.roots('s')) {
    const c = await r.check('s', fileURLToPath(root.uri), 'read');
    t.ok(c.allowed, `${when}: check allows the listed ${root.uri}`);
  }
}

async function runRows(title: string, rows: Row[]) {
  await t.test(title, async (t) => {
    for (const row of rows) {
      await t.test(row.name, async (t) => {
        const dir = t.testdir({});
        makeTree(dir, row.tree);
        row.atLoad?.(dir);
        const yaml = `version: 1\nservers:\n  s:\n    roots:\n${row.entries.map((e) => `      - path: "${join(dir, e)}"\n        kind: any\n`).join('')}`;
        writeFileSync(join(dir, 'mcp-roots.yaml'), yaml);
        const pins = new LinkPins();
        const loaded = await resolveAt(dir, pins);
        t.same(rootsOf(loaded, dir), row.loaded, 'roots at load');
        await listAgreesWithCheck(t, loaded, 'at load');
        row.later?.(dir);
        const after = await resolveAt(dir, pins);
        t.same(rootsOf(after, dir), row.after ?? row.loaded, 'roots after the change');
        await listAgreesWithCheck(t, after, 'after the change');
        if (row.warns) {
          const texts = [...loaded.warnings, ...after.warnings].map((w) => w.message);
          t.ok(
            texts.some((m) => row.warns!.test(m)),
            `a warning says why: ${JSON.stringify(texts)}`,
          );
        }
        for (const p of row.refused ?? []) {
          const c = await after.check('s', p.startsWith('/') ? p : join(dir, p), 'read');
          t.notOk(c.allowed, `${p} refused after the change (${c.reason})`);
        }
        if ((row.after ?? row.loaded).length === 0 && row.entries.length === 1) {
          const rule = after.explain('s').rules[0]!;
          t.ok(rule.reason, `explain gives a reason (${rule.reason})`);
        }
        pins.clear();
        const reloaded = await resolveAt(dir, pins);
        t.same(
          rootsOf(reloaded, dir),
          row.reloaded ?? row.after ?? row.loaded,
          'roots after a reload',
        );
      });
    }
  });
}

await runRows('symlinks on written paths: link kind x time', TIMES);
await runRows('links a glob matches', MATCHED);
await runRows('links to / or the home', TOP);
