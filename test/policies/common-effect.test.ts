/**
 * The shared denies' effect on a root, worked out once per parent directory and then by the
 * path's own last segment (policies/common-effect.ts), equals the rule-by-rule answer for every
 * kind of rule (literal, directory-only, absolute glob, `**\/NAME`, `**\/a/b`, write-only, in
 * `_meta` or not) and every position of a path (the rule's path, inside it, above it, beside it,
 * a segment named like a rule, `/`).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { DenyAccess } from '../../common/types.js';
import { EffectIndex, denyMeta } from '../../policies/common-effect.js';
import { compileDeny, covers, type DenyRule } from '../../policies/deny.js';
import { nodeFs } from '../../policies/index.js';
import { protectedRules } from '../../policies/protected.js';
import { shortDir } from '../helpers/short-dir.js';

/** The rule-by-rule answer, as the resolution worked it out before. */
function reference(rules: DenyRule[], path: string) {
  const kill = rules.findIndex((d) => d.access === 'all' && covers(d, path));
  return {
    ...(kill >= 0 ? { kill } : {}),
    write: rules.some((d) => d.access === 'write' && !d.entriesOnly && covers(d, path)),
    meta: kill >= 0 ? [] : denyMeta(rules, path),
  };
}

void t.test('every rule kind at every position equals the rule-by-rule answer', async (t) => {
  const dir = shortDir();
  const H = join(dir, 'home');
  for (const d of ['proj/app/src', 'proj/secrets', 'proj/.vscode', 'keys', 'big/e1'])
    mkdirSync(join(H, d), { recursive: true });
  const fs = nodeFs();
  const rows: [string, DenyAccess, { entriesOnly?: boolean; inMeta?: boolean }][] = [
    [`${H}/proj/secrets`, 'all', {}],
    [`${H}/keys`, 'write', {}],
    [`${H}/proj/app/src/gen`, 'write', {}],
    [`${H}/proj`, 'all', { entriesOnly: true }],
    [`${H}/proj/*.pem`, 'all', {}],
    [`${H}/big/*/private`, 'write', {}],
    ['**/.env', 'all', {}],
    ['**/node_modules', 'write', { inMeta: false }],
    ['**/private/*.txt', 'all', {}],
    ['**/.git/hooks', 'write', {}],
    [`${H}/proj/app`, 'write', { inMeta: false }],
  ];
  const own: DenyRule[] = [];
  for (const [abs, access, extra] of rows) {
    own.push(
      await compileDeny(fs, abs, access, {
        source: 'deny',
        display: abs,
        inMeta: extra.inMeta ?? true,
        ...(extra.entriesOnly ? { entriesOnly: true } : {}),
      }),
    );
  }
  const builtIn = await protectedRules(fs, {
    home: H,
    policyFiles: [join(H, '.config', 'mcp-roots.yaml')],
    includePatterns: [],
    stateDir: join(H, '.local/state/mcp-roots'),
    runtimeDir: join(dir, 'run'),
    installDir: join(dir, 'install'),
  });
  const paths = [
    '/',
    dir,
    H,
    `${H}/proj`,
    `${H}/proj/secrets`,
    `${H}/proj/secrets/a`,
    `${H}/proj/secretsx`,
    `${H}/proj/app`,
    `${H}/proj/app/src`,
    `${H}/proj/app/src/gen`,
    `${H}/proj/app/src/gen/x/y`,
    `${H}/proj/app/src/generated`,
    `${H}/proj/key.pem`,
    `${H}/proj/sub/key.pem`,
    `${H}/proj/.vscode`,
    `${H}/proj/.vscode/mcp.json`,
    `${H}/keys`,
    `${H}/keys/id`,
    `${H}/.env`,
    `${H}/proj/.env/inner`,
    `${H}/proj/.envx`,
    `${H}/node_modules`,
    `${H}/a/node_modules/b`,
    `${H}/private`,
    `${H}/private/a.txt`,
    `${H}/x/private/a.txt/deeper`,
    `${H}/x/.git`,
    `${H}/x/.git/hooks`,
    `${H}/x/.git/hooks/pre-commit`,
    `${H}/big`,
    `${H}/big/e1`,
    `${H}/big/e1/private`,
    `${H}/big/e1/private/z`,
    `${H}/.config`,
    `${H}/.config/mcp-roots.yaml`,
    `${H}/.bashrc`,
    `${H}/.local`,
    `${H}/.local/state/mcp-roots/x`,
    join(dir, 'install', 'dist'),
    ...Array.from({ length: 50 }, (_, i) => `${H}/big/e${i}`),
  ];
  for (const [name, rules] of [
    ['the policy’s denies', own],
    ['the protected paths', builtIn],
    ['both', [...own, ...builtIn]],
    ['both, protected first', [...builtIn, ...own]],
  ] as const) {
    const effects = new EffectIndex([...rules]);
    let same = 0;
    // Twice: the second pass answers from what the first worked out per parent.
    for (const pass of [1, 2]) {
      for (const p of paths) {
        const want = reference([...rules], p);
        const got = effects.effect(p);
        t.same(got, want, `${name}, pass ${pass}: ${p}`);
        if (JSON.stringify(got) === JSON.stringify(want)) same++;
      }
    }
    t.equal(same, paths.length * 2, `${name}: every path`);
  }
});
