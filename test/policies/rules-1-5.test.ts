/**
 * docs/policy.md "Meaning", rules 1 to 5 (paths, server names, expansion, canonical form, deny),
 * one table per numbered rule, on real fixture trees. Read it side by side with docs/policy.md;
 * rules 6 to 11 are in rules-6-11.test.ts.
 */
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { runRows } from '../helpers/policy-rules.js';

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
    name: 'an unset variable is named as written: $NAME stays $NAME',
    policy: 'version: 1\nservers:\n  s:\n    roots:\n      - path: $NOPE/src\n',
    env: {},
    errors: [
      "5:15: $NOPE: environment variable NOPE is not set (set it in the daemon's environment, e.g. `systemctl --user set-environment NOPE=...`, or write the path out)",
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
