/**
 * A server's list updated by the matches its globs added and removed (policies/view-update.ts)
 * is the list a full resolution gives: after each step of creations, removals and renames under
 * globs of a few hundred entries, with entries that overlap (the same path named twice, once
 * read-only), entry names of their own, a block's own deny and a global one that drop some of
 * the new paths, every server's list, explanation and warnings are compared with a full
 * resolution of the same tree; every other step expands everything again from the resolution
 * before, as the daemon does when it cannot tell what changed. The steps that only add or remove plain folders must be taken by
 * the delta (the list says what it added and removed), so a wrong delta cannot hide behind a
 * full rebuild.
 */
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { LinkPins } from '../../policies/anchor.js';
import {
  loadPolicySources,
  resolvePolicy,
  type ParsedPolicyFile,
  type ResolvedPolicy,
} from '../../policies/index.js';
import { contextFor, makeTree } from '../helpers/policy.js';

const SERVERS = ['s', 'named', 'deep', 'none'];

function view(r: ResolvedPolicy, server: string) {
  const e = r.explain(server);
  return {
    roots: r.roots(server),
    rules: e.rules.map((rule) => ({ ...rule, yielded: [...rule.yielded].sort() })),
    warnings: r.warnings.map((w) => w.message).sort(),
  };
}

void t.test('a list updated by what changed equals a full resolution', async (t) => {
  const dir = t.testdir({});
  const tree = ['home/', 'out/', 'w/deep/a/b/', 'w/deep/c/'];
  for (let i = 0; i < 300; i++) tree.push(`w/big/d${String(i).padStart(3, '0')}/`);
  makeTree(dir, tree);
  const big = join(dir, 'w', 'big');
  const deep = join(dir, 'w', 'deep');
  // A link out: no root, but a glob update judges it again each time.
  symlinkSync(join(dir, 'out'), join(deep, 'lo'));
  const config = join(dir, 'mcp-roots.yaml');
  writeFileSync(
    config,
    [
      'version: 1',
      'deny:',
      `  - path: ${big}/gone*`,
      'servers:',
      '  s:',
      '    roots:',
      `      - path: ${big}/*`,
      `      - path: ${big}/d00*`,
      '        readOnly: true',
      `      - path: ${big}/n*`,
      '    deny:',
      `      - path: ${big}/nope*`,
      '  named:',
      '    roots:',
      `      - path: ${big}/*`,
      '        name: "big {base}"',
      '  deep:',
      '    roots:',
      `      - path: ${deep}/**`,
      `      - path: ${big}/n*`,
      '        readOnly: true',
      '  none:',
      '    roots: []',
      '',
    ].join('\n'),
  );
  const ctx = () => contextFor(dir, { now: Date.now() });
  const loaded = await loadPolicySources(config, ctx());
  t.same(loaded.errors, [], 'the policy loads');
  const files: ParsedPolicyFile[] = loaded.files;
  const pinsInc = new LinkPins();
  const pinsFull = new LinkPins();
  let inc = await resolvePolicy(files, ctx(), { pins: pinsInc });
  await resolvePolicy(files, ctx(), { pins: pinsFull });
  for (const s of SERVERS) inc.roots(s);

  /** Each step: what it does, the paths it changed, and whether only folders came and went. */
  const steps: [string, () => string[], boolean][] = [
    ['a new folder', () => made(join(big, 'e001')), true],
    [
      'three new folders',
      () => [...made(join(big, 'n1')), ...made(join(big, 'n2')), ...made(join(big, 'a'))],
      true,
    ],
    ['a folder removed', () => removed(join(big, 'd150')), true],
    ['a folder the block denies', () => made(join(big, 'nope1')), true],
    ['a folder the policy denies', () => made(join(big, 'gone1')), true],
    ['a denied folder removed', () => removed(join(big, 'nope1')), true],
    ['a folder named twice made', () => made(join(big, 'd00x')), false],
    ['a folder named twice removed', () => removed(join(big, 'd001')), false],
    ['a folder renamed', () => renamed(join(big, 'd200'), join(big, 'r200')), true],
    [
      'a folder renamed into the overlap',
      () => renamed(join(big, 'r200'), join(big, 'd00r')),
      false,
    ],
    ['a file among the folders', () => written(join(big, 'f.txt')), true],
    ['deep folders', () => made(join(deep, 'a', 'b', 'x', 'y')), true],
    // A link and its target: one path named twice by one glob, then once again.
    ['a link to a deep folder', () => linked(join(deep, 'c'), join(deep, 'l')), false],
    ['the link removed', () => removed(join(deep, 'l')), false],
    // Replaced where no event names it (a watcher merged the removal and the creation): the
    // update judges the old link again, and finds a folder.
    [
      'a link out replaced by a folder, another folder reported',
      () => {
        removed(join(deep, 'lo'));
        made(join(deep, 'lo'));
        return made(join(deep, 'c', 'q'));
      },
      true,
    ],
    ['a deep folder renamed', () => renamed(join(deep, 'a'), join(deep, 'z')), true],
    ['a deep subtree removed', () => removed(join(deep, 'z')), true],
    [
      'many at once',
      () => Array.from({ length: 40 }, (_, i) => made(join(big, `m${i}`))).flat(),
      true,
    ],
    [
      'many gone at once',
      () => Array.from({ length: 40 }, (_, i) => removed(join(big, `m${i}`))).flat(),
      true,
    ],
  ];
  let byDelta = 0;
  for (const [n, [step, change, plain]] of steps.entries()) {
    // Every other step expands everything again (what the daemon does when it cannot tell
    // what changed): the lists are still updated by what each expansion added and removed.
    const whole = n % 2 === 1;
    const what = `${step}${whole ? ' (expanded whole)' : ''}`;
    const changed = change();
    const before = new Map(SERVERS.map((s) => [s, inc.roots(s)]));
    inc = await resolvePolicy(files, ctx(), {
      pins: pinsInc,
      previous: inc,
      ...(whole ? {} : { changed }),
    });
    const full = await resolvePolicy(files, ctx(), { pins: pinsFull });
    for (const s of SERVERS)
      t.same(view(inc, s), view(full, s), `${what}: ${s} as a full resolution gives it`);
    for (const s of SERVERS) {
      const said = inc.rootsChange?.(s);
      if (said === undefined) continue;
      byDelta++;
      t.equal(said.from, before.get(s), `${what}: ${s}'s change is from the list before`);
      const was = new Set(before.get(s)!.map((r) => r.uri));
      const now = new Set(inc.roots(s).map((r) => r.uri));
      t.same(
        { added: [...said.added].sort(), removed: [...said.removed].sort() },
        {
          added: [...now].filter((u) => !was.has(u)).sort(),
          removed: [...was].filter((u) => !now.has(u)).sort(),
        },
        `${what}: ${s}'s change says what was added and removed`,
      );
    }
    if (plain)
      t.ok(inc.rootsChange?.('s') !== undefined, `${what}: s's list is updated by the delta`);
  }
  t.ok(byDelta >= 30, `lists updated by a delta: ${byDelta}`);
});

/** The topmost folder made is what a watcher reports. */
function made(path: string): string[] {
  return [mkdirSync(path, { recursive: true }) ?? path];
}

function removed(path: string): string[] {
  rmSync(path, { recursive: true });
  return [path];
}

function renamed(from: string, to: string): string[] {
  renameSync(from, to);
  return [from, to];
}

function written(path: string): string[] {
  writeFileSync(path, 'x');
  return [path];
}

function linked(target: string, path: string): string[] {
  symlinkSync(target, path);
  return [path];
}
