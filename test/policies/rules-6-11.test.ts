/**
 * docs/policy.md "Meaning", rules 6 to 11 (protected paths, several grants, nested roots, expiry,
 * files, order), and unreadable directories, on real fixture trees. Rules 1 to 5 are in
 * rules-1-5.test.ts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { nodeFs } from '../../policies/index.js';
import { contextFor, evaluate, makeTree, NOW } from '../helpers/policy.js';
import { runRows } from '../helpers/policy-rules.js';

await runRows('rule 6: protected paths', [
  {
    name: 'a writable root that holds the policy file: the file and its directory cannot be written',
    tree: ['home/'],
    setup: (dir) => mkdirSync(join(dir, 'home/.config')),
    policy: 'version: 1\nservers:\n  s:\n    roots: [{path: DIR}]\n',
    roots: { s: ['.'] },
    checks: [
      ['s', 'mcp-roots.yaml', 'read', true],
      ['s', 'mcp-roots.yaml', 'write', false],
      ['s', '.', 'write', false],
      ['s', 'other.txt', 'write', true],
      ['s', 'state/grants.yaml', 'write', false],
      ['s', 'run/rootsd.sock', 'write', false],
      ['s', 'home/.config/Claude/claude_desktop_config.json', 'write', false],
      ['s', 'home/work/.vscode/mcp.json', 'write', false],
      ['s', 'home/.config/other.json', 'write', true],
    ],
  },
  {
    name: 'every path an include pattern could match is protected',
    tree: ['d/'],
    setup: (dir) => writeFileSync(join(dir, 'd/a.yaml'), 'version: 1\n'),
    policy: 'version: 1\ninclude: [d/*.yaml]\nservers:\n  s:\n    roots: [{path: DIR/d}]\n',
    checks: [
      ['s', 'd/new.yaml', 'write', false],
      ['s', 'd/a.yaml', 'write', false],
      ['s', 'd/readme.txt', 'write', true],
    ],
  },
]);

await runRows('rule 7: several grants of one path', [
  {
    name: 'one root, writable if any entry grants it writable, named after the first entry',
    tree: ['p/'],
    policy: `version: 1
servers:
  s:
    roots: [{path: DIR/p, name: First, readOnly: true}]
  "*":
    roots: [{path: DIR/p, name: Second}]
`,
    roots: { s: ['p'] },
    checks: [['s', 'p/x', 'write', true]],
  },
  {
    name: 'a writable grant expiring before a read-only one leaves it read-only',
    tree: ['p/'],
    policy: `version: 1
servers:
  s:
    roots:
      - {path: DIR/p, expires: 2026-11-29T11:00:00Z}
      - {path: DIR/p, readOnly: true}
`,
    roots: { s: ['p|ro'] },
  },
]);

await runRows('rule 8: nested roots', [
  {
    name: 'the most specific root decides read-only, both ways',
    tree: ['projects/vendor/', 'projects/app/', 'repos/mine/', 'repos/theirs/'],
    policy: `version: 1
servers:
  s:
    roots:
      - path: DIR/projects
      - {path: DIR/projects/vendor, readOnly: true}
      - {path: DIR/repos/*, readOnly: true}
      - path: DIR/repos/mine
`,
    roots: { s: ['projects', 'projects/vendor|ro', 'repos/mine', 'repos/theirs|ro'] },
    checks: [
      ['s', 'projects/app/x', 'write', true],
      ['s', 'projects/vendor/x', 'write', false],
      ['s', 'projects/vendor/x', 'read', true],
      ['s', 'repos/mine/x', 'write', true],
      ['s', 'repos/theirs/x', 'write', false],
    ],
  },
  {
    name: 'whole segments: a sibling with the root as prefix is outside',
    tree: ['x/project/', 'x/project-evil/'],
    policy: 'version: 1\nservers:\n  s:\n    roots: [{path: DIR/x/project}]\n',
    checks: [
      ['s', 'x/project/a', 'read', true],
      ['s', 'x/project-evil/a', 'read', false],
      ['s', 'x/project-evil', 'read', false],
      ['s', 'x', 'read', false],
    ],
  },
]);

await runRows('rule 9: expiry', [
  {
    name: 'an entry whose expires has passed grants nothing',
    tree: ['a/', 'b/'],
    policy: `version: 1
servers:
  s:
    roots:
      - {path: DIR/a, expires: 2026-11-29T11:59:59Z}
      - {path: DIR/b, expires: 2026-11-29T12:00:01Z}
`,
    roots: { s: ['b'] },
    checks: [
      ['s', 'a/x', 'read', false],
      ['s', 'b/x', 'read', true],
    ],
  },
]);

await runRows('rule 11: order', [
  {
    name: 'sorted by canonical path as UTF-8 bytes',
    tree: ['r/b/', 'r/B/', 'r/a/', 'r/é/', 'r/z/'],
    policy: 'version: 1\nservers:\n  s:\n    roots: [{path: DIR/r/z}, {path: DIR/r/*}]\n',
    roots: { s: ['r/B', 'r/a', 'r/b', 'r/z', 'r/é'] },
  },
]);

void t.test('rule 9: next expiry and per-server expiry', async (t) => {
  const dir = t.testdir({});
  makeTree(dir, ['home/', 'a/', 'b/']);
  const ev = await evaluate(
    dir,
    `version: 1
servers:
  s:
    roots:
      - {path: ${dir}/a, expires: 2026-11-29T13:00:00Z}
      - {path: ${dir}/b, expires: 2026-11-29T12:30:00+00:00}
  t:
    roots:
      - {path: ${dir}/a, expires: 2026-11-29T14:00:00Z}
`,
  );
  t.equal(ev.resolved.nextExpiry, Date.parse('2026-11-29T12:30:00Z'));
  t.equal(ev.resolved.nextExpiryOf('t'), Date.parse('2026-11-29T14:00:00Z'));
  t.equal(ev.resolved.roots('s')[0]!._meta['mcp-roots/expiresAt'], '2026-11-29T13:00:00.000Z');
  t.ok(NOW < ev.resolved.nextExpiry!);
});

void t.test('rule 9: a root writable only through entries that end sooner says when', async (t) => {
  // A sandbox mounts the root writable; with the daemon down when the writing ends, only the
  // root's own `_meta` tells the proxy to mount it read-only then (proxy/root-expiry.ts).
  const dir = t.testdir({});
  makeTree(dir, ['home/', 'a/', 'b/', 'c/', 'd/']);
  const [soon, late] = ['2026-11-29T13:00:00Z', '2026-11-29T14:00:00Z'];
  const ev = await evaluate(
    dir,
    `version: 1
servers:
  s:
    roots:
      - {path: ${dir}/a, readOnly: true}
      - {path: ${dir}/a, expires: ${soon}}
      - {path: ${dir}/b, readOnly: true, expires: ${late}}
      - {path: ${dir}/b, expires: ${soon}}
      - {path: ${dir}/b, expires: ${soon}}
      - {path: ${dir}/c, readOnly: true, expires: ${soon}}
      - {path: ${dir}/c, expires: ${late}}
      - {path: ${dir}/d, readOnly: true}
      - {path: ${dir}/d}
`,
  );
  t.same(ev.errors, []);
  const meta = Object.fromEntries(
    ev.resolved.roots('s').map((r) => [r.uri.slice(r.uri.lastIndexOf('/') + 1), r._meta]),
  );
  const until = (m: (typeof meta)[string]) => m['mcp-roots/writableUntil'];
  t.equal(
    until(meta.a!),
    '2026-11-29T13:00:00.000Z',
    'a forever read-only root, written for a time',
  );
  t.notOk(meta.a!['mcp-roots/expiresAt'], 'the root itself does not end');
  t.equal(until(meta.b!), '2026-11-29T13:00:00.000Z', 'read-only until later');
  t.equal(meta.b!['mcp-roots/expiresAt'], '2026-11-29T14:00:00.000Z');
  t.notOk(until(meta.c!), 'writable for as long as it lasts: its expiry says it');
  t.notOk(until(meta.d!), 'writable for ever');
});

void t.test('rule 10: files, includes, defaults per file, cycles', async (t) => {
  const dir = t.testdir({});
  makeTree(dir, ['home/', 'a/', 'b/', 'c/', 'conf.d/']);
  writeFileSync(
    join(dir, 'conf.d/20-b.yaml'),
    `version: 1\ndefaults: {readOnly: true}\nservers:\n  s:\n    roots: [{path: ${dir}/b}]\n`,
  );
  writeFileSync(
    join(dir, 'conf.d/10-a.yaml'),
    `version: 1\ninclude: [../mcp-roots.yaml]\nservers:\n  s:\n    roots: [{path: ${dir}/a, name: from-a}]\n`,
  );
  const ev = await evaluate(
    dir,
    `version: 1\ninclude: [conf.d/*.yaml]\nservers:\n  s:\n    roots: [{path: ${dir}/c}, {path: ${dir}/a, name: main}]\n`,
  );
  t.same(ev.errors, []);
  t.same(
    ev.sources.files.map((f) => f.file.slice(dir.length)),
    ['/mcp-roots.yaml', '/conf.d/10-a.yaml', '/conf.d/20-b.yaml'],
    'main, then includes depth-first in byte order',
  );
  t.match(
    ev.warnings.map((w) => w.message).join('\n'),
    /include cycle: .*mcp-roots\.yaml -> .*10-a\.yaml -> .*mcp-roots\.yaml/,
  );
  const roots = ev.resolved.roots('s');
  t.same(
    roots.map((r) => [r.name, r._meta['mcp-roots/readOnly']]),
    [
      ['main', false],
      ['b', true],
      ['c', false],
    ],
    'defaults apply only to the file that sets them; first entry names the root',
  );
});

void t.test(
  'rule 10: a missing included file is an error; a missing main file is no roots',
  async (t) => {
    const dir = t.testdir({});
    makeTree(dir, ['home/']);
    const ev = await evaluate(dir, 'version: 1\ninclude:\n  - nope.yaml\n');
    t.same(
      ev.errors.map((e) => `${e.line}:${e.column}: ${e.message}`),
      [
        `3:5: include: included file ${dir}/nope.yaml does not exist (create it, or remove it from include)`,
      ],
    );
    const { loadAndResolve } = await import('../../policies/index.js');
    const none = await loadAndResolve({ configFile: join(dir, 'absent.yaml') }, contextFor(dir));
    t.same(none.errors, []);
    t.ok(none.sources.missingMain);
    t.same(none.resolved.roots('anything'), []);
  },
);

void t.test('unreadable directories become warnings, not crashes', async (t) => {
  // Root reads everything, so EACCES is a fault the OS will not produce here on demand.
  const dir = t.testdir({});
  makeTree(dir, ['home/', 'locked/inner/', 'open/inner/']);
  const real = nodeFs();
  const locked = join(dir, 'locked');
  const denied = () => Promise.reject(Object.assign(new Error('EACCES'), { code: 'EACCES' }));
  const fs = { ...real, readdir: (p: string) => (p === locked ? denied() : real.readdir(p)) };
  const ev = await evaluate(
    dir,
    `version: 1\nservers:\n  s:\n    roots: [{path: ${dir}/locked/*}, {path: ${dir}/open/*}]\n`,
    contextFor(dir, { fs }),
  );
  t.same(
    ev.resolved.roots('s').map((r) => r.name),
    ['inner'],
  );
  t.match(ev.warnings.map((w) => w.message).join('\n'), /cannot read .*locked \(EACCES\)/);
  t.equal(ev.resolved.explain('s').rules[0]!.reason, 'not-readable');
});

void t.test('rule 6: what starts mcp-roots, and its code, are protected too', async (t) => {
  const dir = t.testdir({});
  makeTree(dir, ['home/', 'xdg/', 'install/dist/', 'install/examples/']);
  const ctx = contextFor(dir, {
    env: { XDG_CONFIG_HOME: join(dir, 'xdg') },
    installDir: join(dir, 'install'),
  });
  const ev = await evaluate(dir, `version: 1\nservers:\n  s:\n    roots: [{path: ${dir}}]\n`, ctx);
  const rows: [string, boolean][] = [
    ['home/.config/systemd/user/mcp-rootsd.service', false],
    ['home/.config/systemd/user/mcp-rootsd.service.d/override.conf', false],
    ['xdg/systemd/user/mcp-rootsd.socket', false],
    ['xdg/environment.d/50-roots.conf', false],
    ['xdg/Claude/claude_desktop_config.json', false],
    ['home/.config/Code/User/mcp.json', false],
    ['install/dist/policies/resolve.js', false],
    ['install/node_modules/yaml/index.js', false],
    ['install/package.json', false],
    ['install/examples/demo.yaml', true],
    ['xdg/systemd/user/other.service', false],
    ['xdg/systemd/other.txt', true],
  ];
  for (const [rel, allowed] of rows) {
    const r = await ev.resolved.check('s', join(dir, rel), 'write');
    t.equal(r.allowed, allowed, `write ${rel}: ${r.reason}`);
  }
});
