/**
 * The rows of docs/policy.md "Symlinks" and how each is run: a real fixture tree resolved once
 * (the load), changed, and resolved again with the same pins (what the daemon does after a
 * directory event); then once more with the pins cleared (a reload).
 */
import { mkdirSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t, { type Test } from 'tap';
import {
  LinkPins,
  loadPolicySources,
  resolvePolicy,
  type ResolvedPolicy,
} from '../../policies/index.js';
import { contextFor, makeTree } from './policy.js';

export interface Row {
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

export const link = (dir: string, target: string, at: string) => {
  mkdirSync(join(dir, at, '..'), { recursive: true });
  symlinkSync(target.startsWith('/') ? target : join(dir, target), join(dir, at));
};
export const replaceWithLink = (dir: string, target: string, at: string) => {
  renameSync(join(dir, at), join(dir, `${at}.moved`));
  link(dir, target, at);
};

export const BASE = ['home/', 'work/', 'elsewhere/shared/f', 'elsewhere/mirrors/m1/f', 'other/o/f'];

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

/** Run `rows` as subtests of one test named `title`. */
export async function runRows(title: string, rows: Row[]) {
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
