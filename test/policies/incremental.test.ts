/**
 * A resolution brought up to date from the one before and the paths that changed (what the
 * daemon does after directory events) gives exactly what a full resolution gives: after seeded
 * random churn of a real tree (creations, deletions, renames, files, symlinks into, out of and
 * above the globs, a glob base replaced by a link, permissions taken away and given back), both
 * resolutions are compared server by server, with the link pins of docs/policy.md "Symlinks"
 * kept by each as the daemon keeps them.
 */
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import t, { type Test } from 'tap';
import { Rng } from '../../bench/fuzz-rng.js';
import { LinkPins } from '../../policies/anchor.js';
import {
  loadPolicySources,
  nodeFs,
  resolvePolicy,
  type ParsedPolicyFile,
  type PolicyContext,
  type ResolvedPolicy,
} from '../../policies/index.js';
import { contextFor, makeTree } from '../helpers/policy.js';

const ROUNDS = 30;
const OPS_PER_ROUND = 4;
const SERVERS = ['s', 'ro', 'f'];
const NAMES = ['x', 'a', 'b', '.h', 'node_modules', 'docs', 'y'];

/** Every path under `top` (not following links), for picking what to change. */
function entries(top: string): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const n of names) {
      const p = join(dir, n);
      out.push(p);
      try {
        if (lstatSync(p).isDirectory()) walk(p);
      } catch {
        // gone meanwhile
      }
    }
  };
  walk(top);
  return out;
}

/** Whether anything (a dangling link too) is at `p`. */
function there(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * The paths as a watcher reports them: a watch set on a path through a symlink reports what
 * changes in the target under the watched spelling, so each change is also named through every
 * link in the tree that leads to a directory holding it.
 */
function spellings(links: { link: string; target: string }[], paths: string[]): string[] {
  const out = new Set(paths);
  for (const p of paths)
    for (const { link, target } of links)
      if (p === target || p.startsWith(`${target}/`)) out.add(link + p.slice(target.length));
  return [...out];
}

/** Every symlink under `top` that leads somewhere, with where. */
function linksIn(top: string): { link: string; target: string }[] {
  const links: { link: string; target: string }[] = [];
  for (const p of entries(top)) {
    try {
      if (lstatSync(p).isSymbolicLink()) links.push({ link: p, target: realpathSync(p) });
    } catch {
      // dangling
    }
  }
  return links;
}

function dirsOf(top: string): string[] {
  return [top, ...entries(top).filter((p) => lstatSync(p).isDirectory())];
}

/** One random change under `w`; returns the paths a watcher reports for it. */
function change(rng: Rng, dir: string, locked: Set<string>): string[] {
  const w = join(dir, 'w');
  const dirs = dirsOf(w);
  const all = entries(w);
  const fresh = () =>
    join(rng.pick(dirs), rng.pick(NAMES) + (rng.chance(0.5) ? '' : rng.int(0, 9)));
  const op = rng.int(0, 9);
  if (op <= 2) {
    const p = fresh();
    if (there(p)) return [];
    const chain = rng.chance(0.3) ? join(p, rng.pick(NAMES), rng.pick(NAMES)) : p;
    mkdirSync(chain, { recursive: true });
    return [p];
  }
  if (op === 3) {
    const p = fresh();
    if (there(p)) return [];
    writeFileSync(p, 'x');
    return [p];
  }
  if (all.length === 0) return [];
  const victim = rng.pick(all);
  if (op === 4) {
    rmSync(victim, { recursive: true, force: true });
    return [victim];
  }
  if (op === 5) {
    const to = fresh();
    if (there(to) || to.startsWith(`${victim}/`)) return [];
    renameSync(victim, to);
    return [victim, to];
  }
  if (op === 6 || op === 7) {
    const p = fresh();
    if (there(p)) return [];
    // Into the tree, out of it, above the glob, to a dot directory, dangling.
    const targets = [
      rng.pick(dirs),
      join(dir, 'o'),
      dir,
      join(dir, 'w', 'r', '.h'),
      join(w, 'gone'),
    ];
    symlinkSync(rng.pick(targets), p);
    return [p];
  }
  if (op === 8) {
    if (process.getuid?.() === 0) return [];
    const d = rng.pick(dirs.filter((x) => x !== w));
    if (d === undefined) return [];
    if (locked.has(d)) {
      chmodSync(d, 0o755);
      locked.delete(d);
    } else {
      chmodSync(d, 0o000);
      locked.add(d);
    }
    return [d];
  }
  // A glob base replaced by a link to where it was moved (the pin must hold).
  const base = rng.pick([join(w, 'g'), join(w, 'r')]);
  if (!existsSync(base) || lstatSync(base).isSymbolicLink()) return [];
  renameSync(base, `${base}.moved`);
  symlinkSync(`${base}.moved`, base);
  return [base, `${base}.moved`];
}

/** What a server is given, and why each rule yields what it does. */
function view(r: ResolvedPolicy, server: string) {
  const e = r.explain(server);
  return {
    roots: r.roots(server),
    rules: e.rules.map((rule) => ({ ...rule, yielded: [...rule.yielded].sort() })),
    warnings: r.warnings.map((w) => w.message).sort(),
  };
}

function compare(t: Test, round: number, full: ResolvedPolicy, inc: ResolvedPolicy) {
  for (const s of SERVERS) {
    const a = view(full, s);
    const b = view(inc, s);
    if (JSON.stringify(a) !== JSON.stringify(b)) {
      t.same(b, a, `round ${round}: ${s} as a full resolution gives it`);
      return false;
    }
  }
  return true;
}

void t.test(
  'an update from changed paths equals a full resolution, after random churn',
  async (t) => {
    const seed = Number(process.env.INCREMENTAL_SEED ?? Date.now() % 1_000_000);
    t.comment(`seed ${seed} (INCREMENTAL_SEED=${seed} replays it)`);
    for (const run of [0, 1, 2]) {
      const rng = new Rng(seed + run);
      const dir = t.testdir({});
      makeTree(dir, [
        'home/',
        'o/od/',
        'w/g/one/x/',
        'w/g/two/',
        'w/r/a/x/',
        'w/r/.h/x/',
        'w/plain/',
      ]);
      const config = join(dir, 'mcp-roots.yaml');
      writeFileSync(
        config,
        [
          'version: 1',
          'servers:',
          '  s:',
          '    roots:',
          `      - path: ${dir}/w/g/*`,
          `      - path: ${dir}/w/g/*/x`,
          `      - path: ${dir}/w/r/**/x`,
          `      - path: ${dir}/w/plain`,
          `      - path: ${dir}/w/r/a`,
          '  ro:',
          '    readOnly: true',
          '    roots:',
          `      - path: ${dir}/w/r/**`,
          `      - path: ${dir}/w/g/{one,two,x}`,
          '    deny:',
          `      - path: "**/docs"`,
          '  f:',
          '    roots:',
          `      - path: ${dir}/w/**/y*`,
          '        kind: any',
          '',
        ].join('\n'),
      );
      const ctx = (): PolicyContext => contextFor(dir, { now: Date.now() });
      const loaded = await loadPolicySources(config, ctx());
      t.same(loaded.errors, [], 'the policy loads');
      const files: ParsedPolicyFile[] = loaded.files;
      const pinsFull = new LinkPins();
      const pinsInc = new LinkPins();
      let inc = await resolvePolicy(files, ctx(), { pins: pinsInc });
      // Both start from the policy's load, where the links on written paths are pinned.
      await resolvePolicy(files, ctx(), { pins: pinsFull });
      const locked = new Set<string>();
      let ok = true;
      for (let round = 0; round < ROUNDS && ok; round++) {
        const changed: string[] = [];
        for (let i = 0; i < OPS_PER_ROUND; i++) {
          // A watch set through a link sees changes before and after the link goes or moves.
          const before = linksIn(join(dir, 'w'));
          const paths = change(rng, dir, locked);
          changed.push(...spellings([...before, ...linksIn(join(dir, 'w'))], paths));
        }
        inc = await resolvePolicy(files, ctx(), { pins: pinsInc, previous: inc, changed });
        const full = await resolvePolicy(files, ctx(), { pins: pinsFull });
        ok = compare(t, round, full, inc);
      }
      for (const d of locked) if (existsSync(d)) chmodSync(d, 0o755);
      t.ok(ok, `run ${run}: ${ROUNDS} rounds of ${OPS_PER_ROUND} changes, every server equal`);
      rmSync(dirname(config), { recursive: true, force: true });
    }
  },
);

void t.test(
  'an update reads only the changed subtree, and reuses what no change touched',
  async (t) => {
    const dir = t.testdir({});
    const tree = ['home/', 'g/one/', 'g/two/'];
    for (let p = 0; p < 20; p++) for (let i = 0; i < 20; i++) tree.push(`r/p${p}/d${i}/`);
    makeTree(dir, tree);
    const config = join(dir, 'mcp-roots.yaml');
    writeFileSync(
      config,
      `version: 1\nservers:\n  s:\n    roots:\n      - path: ${dir}/g/*\n      - path: ${dir}/r/**\n`,
    );
    const reads: string[] = [];
    const fs = nodeFs();
    const counting = { ...fs, readdir: (p: string) => (reads.push(p), fs.readdir(p)) };
    const ctx = contextFor(dir, { fs: counting });
    const files = (await loadPolicySources(config, ctx)).files;
    const pins = new LinkPins();
    const first = await resolvePolicy(files, ctx, { pins });
    t.equal(first.roots('s').length, 2 + 20 + 400, 'every folder is a root');
    const full = reads.length;

    mkdirSync(join(dir, 'r', 'p3', 'new', 'deeper'), { recursive: true });
    reads.length = 0;
    const next = await resolvePolicy(files, ctx, {
      pins,
      previous: first,
      changed: [join(dir, 'r', 'p3', 'new')],
    });
    t.equal(next.roots('s').length, 2 + 20 + 400 + 2, 'the new folders are roots');
    t.same(
      reads.sort(),
      [join(dir, 'r', 'p3', 'new'), join(dir, 'r', 'p3', 'new', 'deeper')],
      `only the new subtree is read (a full resolution read ${full} directories)`,
    );
    const x = (r: ResolvedPolicy) =>
      (r as unknown as { expansions: Map<string, unknown> }).expansions;
    const key = `directory\0${dir}/g/*`;
    t.equal(x(next).get(key), x(first).get(key), 'the glob no change touched is reused whole');
  },
);

void t.test(
  "a link is judged again when a link on its way changes, outside the glob's tree",
  async (t) => {
    // Found by the churn above (seed 894222): `w/r/l` leads through the link `w/g`, which stands
    // in for a pinned glob base; removing `w/g` changes nothing under `w/r`, but the full
    // resolution, following the pin, finds `w/r/l` leading outside `w/r/**`.
    const dir = t.testdir({});
    makeTree(dir, ['home/', 'w/g/two/', 'w/r/a/']);
    const config = join(dir, 'mcp-roots.yaml');
    writeFileSync(
      config,
      `version: 1\nservers:\n  s:\n    roots:\n      - path: ${dir}/w/g/*\n  ro:\n    roots:\n      - path: ${dir}/w/r/**\n`,
    );
    const ctx = (): PolicyContext => contextFor(dir, { now: Date.now() });
    const files = (await loadPolicySources(config, ctx())).files;
    const pinsInc = new LinkPins();
    const pinsFull = new LinkPins();
    let inc = await resolvePolicy(files, ctx(), { pins: pinsInc });
    await resolvePolicy(files, ctx(), { pins: pinsFull });
    const step = async (changed: string[]) => {
      inc = await resolvePolicy(files, ctx(), { pins: pinsInc, previous: inc, changed });
      return resolvePolicy(files, ctx(), { pins: pinsFull });
    };
    const w = join(dir, 'w');
    renameSync(join(w, 'g'), join(w, 'g.moved'));
    symlinkSync(join(w, 'g.moved'), join(w, 'g'));
    t.ok(compare(t, 0, await step([join(w, 'g'), join(w, 'g.moved')]), inc));
    symlinkSync(join(w, 'g', 'two'), join(w, 'r', 'l'));
    t.ok(compare(t, 1, await step([join(w, 'r', 'l')]), inc));
    rmSync(join(w, 'g'));
    const full = await step([join(w, 'g')]);
    t.ok(compare(t, 2, full, inc), 'the same after the link on the way is gone');
  },
);
