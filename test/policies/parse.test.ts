/** Parsing policy files: the examples, each broken fixture's exact first error, and the model built. */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { parsePolicyText } from '../../policies/parse.js';
import schema from '../../roots.schema.json' with { type: 'json' };
import { firstError, PARSED_FILE as file } from '../helpers/policy.js';
import { REPO } from '../helpers/repo.js';

const repo = REPO;
const brokenDir = join(repo, 'test/fixtures/broken');
const examplePath = join(repo, 'examples/mcp-roots.yaml');

/** The first error each broken fixture must produce: `line:column` and the exact message. */
const BROKEN: Record<string, [string, string]> = {
  'alias-bomb.yaml': [
    '3:8',
    'aliases expand to too much data (over 100 expansions, as in a "billion laughs" file); write the values out instead of nesting aliases',
  ],
  'bad-flow-mapping.yaml': [
    '5:9',
    'invalid YAML: this { mapping } is never closed; end it with } on the same line',
  ],
  'bare-string-root.yaml': [
    '5:9',
    'servers.filesystem.roots[0]: must be a mapping, not "~/projects"; write "- path: ~/projects"',
  ],
  'defaults-not-mapping.yaml': ['2:11', 'defaults: must be a mapping, not "readOnly"'],
  'deny-access-read.yaml': ['5:13', 'deny[1].access: must be "all" or "write", not "read"'],
  'deny-number.yaml': ['4:5', 'deny[1]: must be a path string or {path, access}, not 42'],
  'deny-typo-access.yaml': ['4:5', 'deny[0].acess: unknown key (did you mean "access"?)'],
  'duplicate-key.yaml': [
    '7:9',
    'servers.filesystem.roots[0].readOnly: duplicate key; a key may appear only once in a mapping, so remove or merge one',
  ],
  'empty-file.yaml': ['1:1', 'the file is empty; a policy file starts with "version: 1"'],
  'empty-path.yaml': ['5:15', 'servers.filesystem.roots[0].path: must not be empty'],
  'empty-servers.yaml': [
    '2:1',
    'servers: is empty; write its keys under it, indented, or remove the key',
  ],
  'expires-date-only.yaml': [
    '6:18',
    'servers.filesystem.roots[0].expires: "2026-12-31" is not an RFC 3339 date-time with a zone, e.g. 2026-12-31T18:00:00Z',
  ],
  'expires-feb-30.yaml': [
    '6:18',
    'servers.filesystem.roots[0].expires: "2026-02-30T12:00:00Z" is not an RFC 3339 date-time with a zone, e.g. 2026-12-31T18:00:00Z',
  ],
  'expires-no-zone.yaml': [
    '6:18',
    'servers.filesystem.roots[0].expires: "2026-12-31T18:00:00" is not an RFC 3339 date-time with a zone, e.g. 2026-12-31T18:00:00Z',
  ],
  'expires-offset-no-colon.yaml': [
    '6:18',
    'servers.filesystem.roots[0].expires: "2026-12-31T18:00:00+0100" is not an RFC 3339 date-time with a zone, e.g. 2026-12-31T18:00:00Z',
  ],
  'expires-tomorrow.yaml': [
    '9:18',
    'servers.filesystem.roots[3].expires: "tomorrow" is not an RFC 3339 date-time with a zone, e.g. 2026-12-31T18:00:00Z',
  ],
  'include-not-list.yaml': [
    '2:10',
    'include: must be a list, not "mcp-roots.d/*.yaml"; write each item on its own line starting with "- "',
  ],
  'kind-folder.yaml': [
    '6:15',
    'servers.filesystem.roots[0].kind: must be "directory", "file" or "any", not "folder"',
  ],
  'merge-key.yaml': [
    '7:5',
    'servers.github["<<"]: YAML merge keys (<<) are not supported; write the keys out',
  ],
  'missing-path.yaml': ['5:9', 'servers.filesystem.roots[0]: missing required key "path"'],
  'missing-version.yaml': ['1:1', 'version: missing (every policy file starts with "version: 1")'],
  'path-bare-tilde.yaml': [
    '5:15',
    'servers.filesystem.roots[0].path: is empty; write a string, or remove the key (for the home directory write "~" in quotes: a bare ~ is YAML\'s empty value)',
  ],
  'path-number.yaml': [
    '5:15',
    'servers.filesystem.roots[0].path: must be a string, not 42 (put it in quotes: "42")',
  ],
  'readonly-yes.yaml': ['4:15', 'servers.filesystem.readOnly: must be true or false, not "yes"'],
  'roots-not-list.yaml': [
    '4:12',
    'servers.filesystem.roots: must be a list, not "~/projects"; write each item on its own line starting with "- "',
  ],
  'server-block-list.yaml': [
    '4:5',
    'servers.filesystem: must be a mapping, not a list; put the entries under "roots:"',
  ],
  'server-name-control-char.yaml': [
    '3:3',
    'servers["file\\u0001system"]: a server name must not contain control characters',
  ],
  'server-name-too-long.yaml': [
    '3:3',
    'servers["xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx…"]: a server name may be at most 256 characters, not 257',
  ],
  'tab-indent.yaml': ['4:1', 'invalid YAML: a tab used for indentation; indent with spaces'],
  'tool-paths-string.yaml': [
    '6:16',
    'servers.filesystem.tools.move_file.paths: must be a list, not "source"; write each item on its own line starting with "- "',
  ],
  'tool-read-only-typo.yaml': [
    '6:9',
    'servers.filesystem.tools.search_files.read_only: unknown key (did you mean "readOnly"?)',
  ],
  'top-level-list.yaml': [
    '1:1',
    'the file must be a mapping that starts with "version: 1", not a list',
  ],
  'top-level-roots.yaml': [
    '2:1',
    'roots: unknown key; the keys allowed here are version, include, defaults, ask, deny or servers',
  ],
  'top-level-server.yaml': ['2:1', 'server: unknown key (did you mean "servers"?)'],
  'two-documents.yaml': [
    '6:1',
    'a second YAML document starts here; a policy file holds one: remove the "---" line, or move the rest to its own file listed under include',
  ],
  'unclosed-flow-sequence.yaml': [
    '6:16',
    'invalid YAML: this [ list ] is never closed; end it with ] on the same line',
  ],
  'unquoted-star-key.yaml': [
    '6:3',
    "invalid YAML: the key * starts with *, which YAML reads as an alias, not a name; put the pattern in quotes: '*':",
  ],
  'unquoted-star-key-first.yaml': [
    '3:3',
    "invalid YAML: the key *-dev starts with *, which YAML reads as an alias, not a name; put the pattern in quotes: '*-dev':",
  ],
  'unclosed-quote.yaml': ['5:15', 'invalid YAML: this "quote is never closed; add the closing "'],
  'undefined-alias.yaml': [
    '4:12',
    'invalid YAML: *common starts with *, so YAML reads it as an alias of an anchor that does not exist; if it is a path or glob, put it in quotes: "*common"',
  ],
  'unknown-key-readonly.yaml': [
    '8:9',
    'servers.filesystem.roots[2].readonly: unknown key (did you mean "readOnly"?)',
  ],
  'unknown-key-rots.yaml': ['4:5', 'servers.filesystem.rots: unknown key (did you mean "roots"?)'],
  'unquoted-glob-star.yaml': [
    '4:5',
    'invalid YAML: **/.env starts with *, so YAML reads it as an alias of an anchor that does not exist; if it is a path or glob, put it in quotes: "**/.env"',
  ],
  'version-2.yaml': ['1:10', 'version: must be 1'],
  'mis-indented-key.yaml': [
    '6:8',
    'invalid YAML: this line is indented by 7 spaces, which lines up with no line above it ("path:" on line 5 at 8 spaces; the list item on line 5 at 6 spaces); indent it by as many spaces as the lines it belongs with',
  ],
  'mis-indented-item.yaml': [
    '6:6',
    'invalid YAML: this line is indented by 5 spaces, which lines up with no line above it (the list item on line 5 at 6 spaces; "roots:" on line 4 at 4 spaces); indent it by as many spaces as the lines it belongs with',
  ],
  'mis-indented-server.yaml': [
    '3:2',
    'invalid YAML: this line is indented by 1 space, but line 6, in the same block under "servers:" (line 2), by 2 spaces; indent the lines of one block by the same number of spaces',
  ],
  'key-at-item-dash.yaml': [
    '6:7',
    'invalid YAML: this key lines up with the dash of the list item on line 5, so it is neither in that item nor an item of its own; indent it by 8 spaces to put it in that item, or start it with "- " to make it a new item',
  ],
};

/** Fixtures of one slip each: one error, not YAML's several for the same line. */
const ONE_SLIP = [
  'mis-indented-key.yaml',
  'mis-indented-item.yaml',
  'mis-indented-server.yaml',
  'key-at-item-dash.yaml',
];

void t.test('the example policy parses with no errors', (t) => {
  const bytes = readFileSync(examplePath);
  const r = parsePolicyText(bytes, examplePath);
  t.same(r.errors, []);
  t.same(r.warnings, []);
  const p = r.policy!;
  t.equal(p.file, examplePath);
  t.equal(p.sha256, createHash('sha256').update(bytes).digest('hex'));
  t.same(
    p.include.map((i) => i.pattern),
    ['mcp-roots.d/*.yaml'],
  );
  t.same(p.defaults, { readOnly: false });
  t.same(
    p.deny.map((d) => [d.path, d.access]),
    [
      ['~/.ssh', 'all'],
      ['~/.gnupg', 'all'],
      ['**/.env', 'all'],
      ['~/projects/*/.git', 'write'],
    ],
  );
  t.same(
    p.servers.map((s) => s.pattern),
    ['filesystem', 'github-*', '*'],
  );
  const [fs, github, all] = p.servers;
  t.equal(fs!.readOnly, false);
  t.same(
    fs!.roots.map((r) => r.path),
    [
      '~/projects/myproject',
      '~/repos/*',
      '~/Downloads',
      '~/notes/todo.md',
      '~/notes/*.md',
      '${HOME}/Documents/reports',
    ],
  );
  t.match(fs!.roots[0], { name: 'My Project' });
  t.match(fs!.roots[1], { name: 'repo {base}', readOnly: true });
  t.equal(fs!.roots[2]!.expires, Date.UTC(2026, 11, 31, 18));
  t.equal(fs!.roots[4]!.kind, 'file');
  t.equal(fs!.roots[5]!.expires, Date.UTC(2027, 0, 15, 8));
  t.notOk('readOnly' in fs!.roots[0]!, 'unset keys stay unset');
  t.same(
    fs!.deny.map((d) => [d.path, d.access]),
    [['~/projects/myproject/secrets', 'all']],
  );
  t.same(fs!.tools, {
    search_files: { paths: ['path'], readOnly: true },
    move_file: { paths: ['source', 'destination'], readOnly: false },
  });
  t.equal(github!.readOnly, true);
  t.same(
    github!.roots.map((r) => [r.path, r.readOnly]),
    [['~/repos', false]],
  );
  t.same(github!.tools, {});
  t.equal(all!.readOnly, undefined);
  t.same(all!.deny, []);

  // Positions: lines and columns of the nodes as written.
  const lines = bytes.toString('utf8').split('\n');
  const posOf = (needle: string) => {
    const line = lines.findIndex((l) => l.includes(needle));
    return { file: examplePath, line: line + 1, column: lines[line]!.indexOf(needle) + 1 };
  };
  t.same(fs!.pos, posOf('filesystem:'));
  t.same(fs!.roots[0]!.pos, posOf('path: ~/projects/myproject'));
  t.same(fs!.roots[0]!.pathPos, posOf('~/projects/myproject'));
  t.same(p.deny[0]!.pos, posOf('~/.ssh'));
  t.same(p.deny[3]!.pos, posOf('path: ~/projects/*/.git'));
  t.same(p.include[0]!.pos, posOf('mcp-roots.d/*.yaml'));
  t.same(all!.pos, posOf("'*':"));
  t.end();
});

void t.test('the included example file parses with no errors', (t) => {
  const path = join(repo, 'examples/mcp-roots.d/work.yaml');
  const r = parsePolicyText(readFileSync(path), path);
  t.same(r.errors, []);
  t.same(r.policy!.defaults, { readOnly: true });
  t.same(
    r.policy!.servers[0]!.roots.map((x) => [x.path, x.readOnly]),
    [
      ['~/work/handbook', undefined],
      ['~/work/current', false],
    ],
  );
  t.end();
});

void t.test('each broken policy fails with its exact first error', (t) => {
  const files = readdirSync(brokenDir).filter((f) => f.endsWith('.yaml'));
  t.ok(files.length >= 25, `${files.length} broken fixtures`);
  t.same(files.sort(), Object.keys(BROKEN).sort(), 'one expectation per fixture');
  for (const name of files) {
    const path = join(brokenDir, name);
    const r = parsePolicyText(readFileSync(path), path);
    t.equal(r.policy, undefined, `${name}: no policy`);
    const e = r.errors[0];
    t.same(e && [`${e.line}:${e.column}`, e.message], BROKEN[name], name);
    t.ok(
      r.errors.every((x) => x.file === path && !x.message.includes('\n')),
      `${name}: every error names the file and is one line`,
    );
    if (ONE_SLIP.includes(name)) t.equal(r.errors.length, 1, `${name}: one error`);
  }
  t.end();
});

void t.test('the brief cases from docs/policy.md read exactly', (t) => {
  const doc = (roots: string) =>
    `version: 1\nservers:\n  filesystem:\n    roots:\n${roots}`.replace(/\|/g, '\n');
  t.same(firstError(doc('      - path: ~/a|        readonly: true|')), [
    '6:9',
    'servers.filesystem.roots[0].readonly: unknown key (did you mean "readOnly"?)',
  ]);
  t.same(firstError(doc('      - path: ~/a|        Read-Only: true|')), [
    '6:9',
    'servers.filesystem.roots[0].Read-Only: unknown key (did you mean "readOnly"?)',
  ]);
  t.same(firstError(doc('      - path: ~/a|        nmae: x|')), [
    '6:9',
    'servers.filesystem.roots[0].nmae: unknown key (did you mean "name"?)',
  ]);
  t.same(firstError(doc('      - path: ~/a|        colour: red|')), [
    '6:9',
    'servers.filesystem.roots[0].colour: unknown key; the keys allowed here are path, name, readOnly, expires or kind',
  ]);
  t.same(firstError('version: 1\nservers:\n  "*":\n    roots: [{name: x}]\n'), [
    '4:13',
    'servers["*"].roots[0]: missing required key "path"',
  ]);
  t.same(firstError('version: 1\ndeny: [~/.ssh, [x]]\n'), [
    '2:16',
    'deny[1]: must be a path string or {path, access}, not a list',
  ]);
  t.same(firstError('version: 1\ndeny:\n  - ~/.ssh\n  -\n'), [
    '4:4',
    'deny[1]: must be a path string or {path, access}, not empty',
  ]);
  t.same(firstError('version: 1\ndeny: [{access: write}]\n'), [
    '2:8',
    'deny[0]: missing required key "path"',
  ]);
  t.same(firstError('version: 1\ndeny: [""]\n'), ['2:8', 'deny[0]: must not be empty']);
  t.same(firstError('version: "1"\n'), ['1:10', 'version: must be 1']);
  t.same(firstError('version: 1\nservers:\n  ? [a, b]\n  : roots: []\n'), [
    '3:5',
    'servers: a key must be a name, not a mapping or list; is a ":" or a quote misplaced?',
  ]);
  t.same(firstError('servers: {}\nversion: 1\nversion: 1\n'), [
    '3:1',
    'version: duplicate key; a key may appear only once in a mapping, so remove or merge one',
  ]);
  t.end();
});

void t.test('defaults and order', (t) => {
  const r = parsePolicyText(
    'version: 1\nservers:\n  zeta: {}\n  "2": {}\n  alpha: {roots: [{path: a}]}\n  "1": {}\ndeny: [{path: x}]\n',
    file,
  );
  t.same(r.errors, []);
  const p = r.policy!;
  t.same(
    p.servers.map((s) => s.pattern),
    ['zeta', '2', 'alpha', '1'],
    'servers in the order written, integer-like names too',
  );
  t.same(p.defaults, { readOnly: false });
  t.same(p.include, []);
  t.equal(p.deny[0]!.access, 'all');
  t.same(p.servers[0], {
    pattern: 'zeta',
    pos: { file, line: 3, column: 3 },
    roots: [],
    deny: [],
    tools: {},
  });
  t.same(p.servers[2]!.roots[0], {
    path: 'a',
    pos: { file, line: 5, column: 19 },
    pathPos: { file, line: 5, column: 26 },
  });
  const minimal = parsePolicyText('version: 1\n', file);
  t.same(minimal.policy?.servers, []);
  t.same(parsePolicyText('version: 1\n', file), parsePolicyText(Buffer.from('version: 1\n'), file));
  t.end();
});

void t.test('unknown YAML tags are warnings, not values', (t) => {
  const r = parsePolicyText(
    'version: 1\nservers:\n  x:\n    roots:\n      - path: !!binary aGVsbG8=\n',
    file,
  );
  t.same(r.errors, []);
  t.equal(r.policy!.servers[0]!.roots[0]!.path, 'aGVsbG8=');
  t.equal(r.warnings.length, 1);
  t.match(r.warnings[0], { file, line: 5, column: 15 });
  t.end();
});

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

void t.test('the schema describes every property and closes every object', (t) => {
  const problems: string[] = [];
  const walk = (node: Json, where: string): void => {
    if (Array.isArray(node)) {
      node.forEach((n, i) => walk(n, `${where}/${i}`));
      return;
    }
    if (node === null || typeof node !== 'object') return;
    if (node.type === 'object') {
      const ap = node.additionalProperties;
      const isMap = typeof ap === 'object' && ap !== null && node.propertyNames !== undefined;
      if (ap !== false && !isMap) {
        problems.push(`${where}: additionalProperties must be false (or a map with propertyNames)`);
      }
    }
    for (const key of ['properties', 'definitions'] as const) {
      const props = node[key];
      if (props && typeof props === 'object' && !Array.isArray(props)) {
        for (const [name, sub] of Object.entries(props)) {
          const described =
            sub !== null && typeof sub === 'object' && !Array.isArray(sub) && 'description' in sub;
          if (!described) problems.push(`${where}/${key}/${name}: no description`);
        }
      }
    }
    for (const [k, v] of Object.entries(node)) walk(v, `${where}/${k}`);
  };
  walk(schema as unknown as Json, '#');
  t.same(problems, []);
  t.ok(schema.$id && schema.title, 'has $id and title');
  t.end();
});

void t.test('a glob entry named without {base} warns: its matches would share one name', (t) => {
  const text =
    'version: 1\nservers:\n  fs:\n    roots:\n' +
    "      - {path: ~/p/*, name: p}\n      - {path: ~/q/*, name: 'q {base}'}\n      - {path: ~/one, name: one}\n";
  const r = parsePolicyText(text, '/x/p.yaml');
  t.same(r.errors, []);
  t.same(
    r.warnings.map((w) => `${w.line}:${w.column}: ${w.message}`),
    [
      '5:9: ~/p/*: every match of this glob is named "p"; put {base} in the name ("p {base}") to tell them apart',
    ],
  );
  t.end();
});
