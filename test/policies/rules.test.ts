/**
 * docs/policy.md "Meaning", one table per numbered rule, on real fixture trees.
 * Read this file side by side with docs/policy.md.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { nodeFs } from '../../policies/index.js';
import { contextFor, evaluate, makeTree, NOW, uri } from '../helpers/policy.js';

interface Row {
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

async function runRows(rule: string, rows: Row[]) {
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

await runRows('rule 1: paths', [
  {
    name: '~ expands to the home directory',
    tree: ['home/notes/'],
    policy: 'version: 1\nservers:\n  s:\n    roots:\n      - path: ~/notes\n',
    roots: { s: ['home/notes'] },
  },
  {
    name: '$VAR and ${VAR} expand from the given environment',
    tree: ['home/projects/alpha/src/', 'home/b/'],
    policy:
      'version: 1\nservers:\n  s:\n    roots:\n      - path: ${PROJECT}/src\n      - path: $B\n',
    env: { PROJECT: 'DIR/home/projects/alpha', B: 'DIR/home/b' },
    roots: { s: ['home/b', 'home/projects/alpha/src'] },
  },
  {
    name: 'an unset variable is an error, never an empty string',
    policy: 'version: 1\nservers:\n  s:\n    roots:\n      - path: ${NOPE}/src\n',
    env: {},
    errors: [
      "5:15: ${NOPE}: environment variable NOPE is not set (set it in the daemon's environment, e.g. `systemctl --user set-environment NOPE=...`, or write the path out)",
    ],
  },
  {
    name: 'a relative path is relative to the policy file, .. resolved lexically',
    tree: ['work/a/', 'work/b/'],
    policy:
      'version: 1\nservers:\n  s:\n    roots:\n      - path: work/a\n      - path: work/a/../b\n',
    roots: { s: ['work/a', 'work/b'] },
  },
  {
    name: 'a NUL byte is an error',
    policy: 'version: 1\nservers:\n  s:\n    roots:\n      - path: "/tmp/a\\0b"\n',
    errors: ['5:15: servers.s.roots[0].path: must not contain a NUL character'],
  },
]);

await runRows('rule 2: server names', [
  {
    name: 'a name collects every block that equals or matches it; * matches / and .',
    tree: ['a/', 'b/', 'c/', 'd/'],
    policy: `version: 1
servers:
  fs:
    roots: [{path: DIR/a}]
  "f*":
    roots: [{path: DIR/b}]
  "*":
    roots: [{path: DIR/c}]
  "org/*.x":
    roots: [{path: DIR/d}]
`,
    roots: { fs: ['a', 'b', 'c'], other: ['c'], 'org/team.x': ['c', 'd'], 'org/team.y': ['c'] },
  },
  {
    name: '\\* is a literal star, matching is case-sensitive, unknown names get nothing',
    tree: ['a/'],
    policy:
      'version: 1\nservers:\n  "st\\\\*r":\n    roots: [{path: DIR/a}]\n  Fs:\n    roots: [{path: DIR/a}]\n',
    roots: { 'st*r': ['a'], stxr: [], fs: [], Fs: ['a'], nobody: [] },
  },
  {
    name: 'regular-expression characters in a pattern are literal',
    tree: ['a/'],
    policy: 'version: 1\nservers:\n  "github-*.io(x)[y]+":\n    roots: [{path: DIR/a}]\n',
    roots: { 'github-mcp.io(x)[y]+': ['a'], 'github-mcp.ioxy+': [], 'github-mcp.io(x)[y]': [] },
    checks: [['nobody', 'a', 'read', false]],
  },
]);

await runRows('rule 3: expansion', [
  {
    name: 'a path that exists literally is taken literally, glob characters and all',
    tree: ['Tax [2024]/', 'Tax 2/'],
    policy: 'version: 1\nservers:\n  s:\n    roots: [{path: "DIR/Tax [2024]"}]\n',
    roots: { s: ['Tax [2024]'] },
  },
  {
    name: 'globs yield existing entries of their kind; dotfiles only when spelled',
    tree: ['repos/a/', 'repos/b/', 'repos/.hidden/', 'repos/file.txt', 'notes/x.md', 'notes/.y.md'],
    policy: `version: 1
servers:
  dirs:
    roots: [{path: DIR/repos/*}]
  files:
    roots: [{path: DIR/notes/*.md, kind: file}]
  any:
    roots: [{path: DIR/repos/*, kind: any}]
  dots:
    roots: [{path: DIR/repos/.*}]
`,
    roots: {
      dirs: ['repos/a', 'repos/b'],
      files: ['notes/x.md'],
      any: ['repos/a', 'repos/b', 'repos/file.txt'],
      dots: ['repos/.hidden'],
    },
  },
  {
    name: '** matches at any depth, ? and [...] and {a,b} work',
    tree: [
      'w/a/x/src/',
      'w/b/src/',
      'w/src/',
      'p/a1/',
      'p/a2/',
      'p/b1/',
      'q/one/',
      'q/two/',
      'q/six/',
    ],
    policy: `version: 1
servers:
  s:
    roots:
      - path: DIR/w/**/src
      - path: DIR/p/a?
      - path: DIR/p/[b]1
      - path: DIR/q/{one,two}
`,
    roots: { s: ['p/a1', 'p/a2', 'p/b1', 'q/one', 'q/two', 'w/a/x/src', 'w/b/src', 'w/src'] },
  },
  {
    name: 'entries that do not exist yield nothing (and are no error)',
    policy: 'version: 1\nservers:\n  s:\n    roots: [{path: DIR/nope}, {path: DIR/none/*}]\n',
    roots: { s: [] },
  },
  {
    name: 'a glob never follows a symlinked directory while walking, nor keeps a link leading outside its base',
    tree: ['repos/good/', 'outside/secret/'],
    setup: (dir) => {
      symlinkSync(join(dir, 'outside'), join(dir, 'repos/escape'));
      symlinkSync('/', join(dir, 'repos/good/root'));
      symlinkSync(join(dir, 'repos/good'), join(dir, 'repos/alias'));
    },
    policy:
      'version: 1\nservers:\n  s:\n    roots: [{path: DIR/repos/*}]\n  deep:\n    roots: [{path: DIR/repos/**/secret}]\n',
    roots: { s: ['repos/good'], deep: [] },
  },
  {
    name: 'a symlink loop under ** cannot hang the walk',
    tree: ['loop/a/target/'],
    setup: (dir) => {
      symlinkSync(join(dir, 'loop'), join(dir, 'loop/a/back'));
      symlinkSync('self', join(dir, 'loop/self'));
    },
    policy: 'version: 1\nservers:\n  s:\n    roots: [{path: DIR/loop/**/target}]\n',
    roots: { s: ['loop/a/target'] },
  },
]);

await runRows('rule 4: canonical form', [
  {
    name: 'names with spaces, #, %, ?, brackets and non-ASCII survive as URIs',
    tree: [
      'odd/my dir/',
      'odd/a#b/',
      'odd/50%/',
      'odd/what?/',
      'odd/[x]/',
      'odd/café/',
      'odd/日本/',
    ],
    policy: 'version: 1\nservers:\n  s:\n    roots: [{path: DIR/odd/*}]\n',
    roots: {
      s: ['odd/50%', 'odd/[x]', 'odd/a#b', 'odd/café', 'odd/my dir', 'odd/what?', 'odd/日本'],
    },
  },
  {
    name: 'a root reached through a symlink is listed at its canonical path',
    tree: ['real/proj/'],
    setup: (dir) => symlinkSync(join(dir, 'real/proj'), join(dir, 'link')),
    policy: 'version: 1\nservers:\n  s:\n    roots: [{path: DIR/link}]\n',
    roots: { s: ['real/proj'] },
  },
]);

await runRows('rule 5: deny', [
  {
    name: 'a root equal to or inside an access: all deny is dropped',
    tree: ['home/.ssh/keys/', 'home/ok/'],
    policy:
      'version: 1\ndeny: [~/.ssh]\nservers:\n  s:\n    roots: [{path: ~/.ssh}, {path: ~/.ssh/keys}, {path: ~/ok}]\n',
    roots: { s: ['home/ok'] },
  },
  {
    name: 'a root inside an access: write deny is listed read-only',
    tree: ['projects/a/.git/', 'projects/a/src/'],
    policy: `version: 1
deny:
  - {path: DIR/projects/*/.git, access: write}
servers:
  s:
    roots: [{path: DIR/projects/a/.git}, {path: DIR/projects/a/src}]
`,
    roots: { s: ['projects/a/.git|ro', 'projects/a/src'] },
    checks: [
      ['s', 'projects/a/.git/config', 'read', true],
      ['s', 'projects/a/.git/config', 'write', false],
    ],
  },
  {
    name: 'a deny inside a root leaves the root listed and refuses the denied paths and their ancestors for writing',
    tree: ['proj/secrets/key', 'proj/src/main.ts', 'proj/src/.env'],
    policy: `version: 1
deny: ["**/.env"]
servers:
  s:
    roots: [{path: DIR/proj}]
    deny: [DIR/proj/secrets]
`,
    roots: { s: ['proj'] },
    checks: [
      ['s', 'proj/src/main.ts', 'read', true],
      ['s', 'proj/src/main.ts', 'write', true],
      ['s', 'proj/secrets/key', 'read', false],
      ['s', 'proj/secrets', 'read', false],
      ['s', 'proj/src/.env', 'read', false],
      ['s', 'proj', 'write', false],
      ['other', 'proj/src/main.ts', 'read', false],
    ],
  },
  {
    name: 'a deny on a path that does not exist still stops a write that would create it',
    tree: ['home/'],
    policy: 'version: 1\ndeny: [~/.ssh]\nservers:\n  s:\n    roots: [{path: "~"}]\n',
    roots: { s: ['home'] },
    checks: [
      ['s', 'home/.ssh/authorized_keys', 'write', false],
      ['s', 'home/.ssh', 'read', false],
      ['s', 'home/notes.txt', 'write', true],
    ],
  },
  {
    name: 'a symlink inside a root into a denied directory is judged where it leads',
    tree: ['proj/src/', 'proj/secrets/key'],
    setup: (dir) => symlinkSync(join(dir, 'proj/secrets'), join(dir, 'proj/src/s')),
    policy:
      'version: 1\nservers:\n  s:\n    roots: [{path: DIR/proj}]\n    deny: [DIR/proj/secrets]\n',
    checks: [['s', 'proj/src/s/key', 'read', false]],
  },
]);

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
