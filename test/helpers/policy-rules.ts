/**
 * The table runner of the docs/policy.md "Meaning" tests: each row a fixture tree, a policy, the
 * roots each server must get and the checks that must pass or fail.
 */
import { join } from 'node:path';
import t from 'tap';
import { contextFor, evaluate, makeTree, uri } from './policy.js';

/** One case of one rule. */
export interface Row {
  name: string;
  tree?: string[];
  setup?: (dir: string) => void;
  policy: string;
  /** server -> expected roots, as paths relative to the fixture dir (suffix '|ro' for read-only). */
  roots?: Record<string, string[]>;
  /** [server, path relative to dir (or absolute if it starts with /), access, allowed] */
  checks?: [string, string, 'read' | 'write', boolean][];
  errors?: string[];
  env?: Record<string, string>;
  now?: number;
}

/** Run `rows` as subtests of one test named after the rule. */
export async function runRows(rule: string, rows: Row[]) {
  await t.test(rule, async (t) => {
    for (const row of rows) {
      await t.test(row.name, async (t) => {
        const dir = t.testdir({});
        makeTree(dir, ['home/', ...(row.tree ?? [])]);
        row.setup?.(dir);
        const ctx = contextFor(dir, {
          ...(row.env
            ? {
                env: Object.fromEntries(
                  Object.entries(row.env).map(([k, v]) => [k, v.replaceAll('DIR', dir)]),
                ),
              }
            : {}),
          ...(row.now !== undefined ? { now: row.now } : {}),
        });
        const ev = await evaluate(dir, row.policy.replaceAll('DIR', dir), ctx);
        if (row.errors) {
          t.same(
            ev.errors.map((e) => `${e.line}:${e.column}: ${e.message}`),
            row.errors,
            'errors',
          );
        } else {
          t.same(ev.errors, [], 'no errors');
        }
        for (const [server, expected] of Object.entries(row.roots ?? {})) {
          const got = ev.resolved
            .roots(server)
            .map((r) => r.uri + (r._meta['mcp-roots/readOnly'] ? '|ro' : ''));
          const want = expected.map((e) => {
            const [p, flag] = e.split('|');
            return uri(dir, p!) + (flag === 'ro' ? '|ro' : '');
          });
          t.same(got, want, `roots of ${server}`);
        }
        for (const [server, p, access, allowed] of row.checks ?? []) {
          const abs = p.startsWith('/') ? p : join(dir, p);
          const res = await ev.resolved.check(server, abs, access);
          t.equal(res.allowed, allowed, `${access} ${p} for ${server}: ${res.reason}`);
        }
      });
    }
  });
}
