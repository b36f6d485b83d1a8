/**
 * Path arguments in every shape a schema can give them, attacked through the real proxy and a
 * real daemon: with the schema-shapes fixture server (zod unions, Python's `str | None`, `$ref`
 * and `$defs`, a `$ref` cycle, nested objects, arrays of objects, no type, type lists, odd names,
 * a tool it never listed) and with the real `@modelcontextprotocol/server-filesystem`. A row passes
 * when the proxy refuses with the reason given, or when the call reaches the server and nothing
 * forbidden comes back.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, startProxiedFs, waitFor } from '../helpers/proxy.js';
import { startProxiedShapes } from '../helpers/shapes-server.js';

const MARK = 'MARK-FORBIDDEN';

function makeWorkspace(w: string): void {
  for (const d of ['in/sub', 'in/secret', 'out']) mkdirSync(join(w, d), { recursive: true });
  writeFileSync(join(w, 'in/a.txt'), 'a ok');
  writeFileSync(join(w, 'in/code.js'), '// TODO\nconst x = 1;\n');
  writeFileSync(join(w, 'in/secret/s.txt'), MARK);
  writeFileSync(join(w, 'out/o.txt'), MARK);
}

function policy(w: string): string {
  const block = `    roots:
      - path: ${w}/in
    deny:
      - ${w}/in/secret
`;
  return `version: 1\nservers:\n  shapes:\n${block}  fs:\n${block}`;
}

/** `refused`: the proxy answers, and the text matches. `reached`: the server got the call. */
interface Row {
  tool: string;
  args: (w: string) => Record<string, unknown>;
  expect: RegExp | 'reached';
}

const OUTSIDE = /outside every root/;
const DENIED = /denied/;

/** Against the schema-shapes fixture. */
const SHAPES: [string, Row][] = [
  [
    'zod union, string',
    { tool: 'zod_union', args: (w) => ({ target: `${w}/out/o.txt` }), expect: OUTSIDE },
  ],
  [
    'zod union, array',
    {
      tool: 'zod_union',
      args: (w) => ({ target: [`${w}/in/a.txt`, `${w}/in/secret/s.txt`] }),
      expect: DENIED,
    },
  ],
  [
    'zod union, allowed',
    { tool: 'zod_union', args: (w) => ({ target: [`${w}/in/a.txt`] }), expect: 'reached' },
  ],
  [
    'zod nullable, outside',
    { tool: 'zod_nullable', args: (w) => ({ file_path: `${w}/out`, count: 1 }), expect: OUTSIDE },
  ],
  [
    'zod nullable, null',
    { tool: 'zod_nullable', args: () => ({ file_path: null, count: 1 }), expect: 'reached' },
  ],
  [
    'zod nullable, a number for a path',
    {
      tool: 'zod_nullable',
      args: () => ({ file_path: 7, count: 1 }),
      expect: /argument file_path: it holds a number/,
    },
  ],
  [
    'zod discriminated union, path by value',
    {
      tool: 'zod_discriminated',
      args: (w) => ({ spec: { kind: 'file', location: `${w}/out/o.txt` } }),
      expect: OUTSIDE,
    },
  ],
  [
    'Python str | None, outside',
    { tool: 'python_optional', args: (w) => ({ repo_path: `${w}/out` }), expect: OUTSIDE },
  ],
  [
    'Python str | None, relative',
    {
      tool: 'python_optional',
      args: () => ({ repo_path: '../out' }),
      expect: /relative path.*argument repo_path/,
    },
  ],
  [
    'Python str | None, None',
    { tool: 'python_optional', args: () => ({ repo_path: null }), expect: 'reached' },
  ],
  [
    'Python str | None, inside',
    { tool: 'python_optional', args: (w) => ({ repo_path: `${w}/in/sub` }), expect: 'reached' },
  ],
  [
    'pydantic $ref model, denied',
    {
      tool: 'pydantic_ref',
      args: (w) => ({ where: { folder: `${w}/in/secret` } }),
      expect: DENIED,
    },
  ],
  [
    'pydantic $ref model, relative',
    {
      tool: 'pydantic_ref',
      args: () => ({ where: { folder: 'secret' } }),
      expect: /relative path.*argument where\.folder/,
    },
  ],
  [
    'pydantic $ref model, inside',
    {
      tool: 'pydantic_ref',
      args: (w) => ({ where: { folder: `${w}/in/sub` } }),
      expect: 'reached',
    },
  ],
  [
    '$ref cycle, path-like member',
    { tool: 'ref_cycle', args: () => ({ spec: { path: 'x' } }), expect: /relative path/ },
  ],
  [
    '$ref cycle, path by value',
    { tool: 'ref_cycle', args: () => ({ spec: '/etc/passwd' }), expect: OUTSIDE },
  ],
  [
    '$ref cycle, no path',
    { tool: 'ref_cycle', args: () => ({ spec: { note: 'hello' } }), expect: 'reached' },
  ],
  [
    'recursive $ref tree, deep',
    {
      tool: 'ref_tree',
      args: (w) => ({
        dir: `${w}/in/sub`,
        children: [{ dir: `${w}/in/sub`, children: [{ dir: `${w}/in/secret` }] }],
      }),
      expect: DENIED,
    },
  ],
  [
    'nested object',
    {
      tool: 'nested_object',
      args: (w) => ({ options: { cwd: `${w}/out`, depth: 2 } }),
      expect: OUTSIDE,
    },
  ],
  [
    'nested object, inside',
    {
      tool: 'nested_object',
      args: (w) => ({ options: { cwd: `${w}/in/sub`, depth: 2 } }),
      expect: 'reached',
    },
  ],
  [
    'array of objects',
    {
      tool: 'array_of_objects',
      args: (w) => ({
        files: [{ path: `${w}/in/a.txt`, content: '// x' }, { path: `${w}/in/secret/s.txt` }],
      }),
      expect: DENIED,
    },
  ],
  [
    'array of objects, text that is no path',
    {
      tool: 'array_of_objects',
      args: (w) => ({ files: [{ path: `${w}/in/a.txt`, content: '/* comment */' }] }),
      expect: 'reached',
    },
  ],
  [
    'array of strings, ~',
    {
      tool: 'array_of_strings',
      args: (w) => ({ inputs: [`${w}/in/a.txt`, '~/.ssh/id_rsa'] }),
      expect: /starts with ~/,
    },
  ],
  [
    'array of strings, a number among them',
    {
      tool: 'array_of_strings',
      args: (w) => ({ inputs: [`${w}/in/a.txt`, 3] }),
      expect: /argument inputs\[1\]: it holds a number/,
    },
  ],
  [
    'no type',
    { tool: 'no_type', args: (w) => ({ notebookPath: `${w}/out/n.ipynb` }), expect: OUTSIDE },
  ],
  [
    'no type, an object of paths',
    { tool: 'no_type', args: (w) => ({ notebookPath: { path: `${w}/out` } }), expect: OUTSIDE },
  ],
  [
    'no type, a boolean',
    { tool: 'no_type', args: () => ({ notebookPath: true }), expect: /holds a boolean/ },
  ],
  ['type list', { tool: 'type_list', args: (w) => ({ outputDir: `${w}/out` }), expect: OUTSIDE }],
  ['type list, null', { tool: 'type_list', args: () => ({ outputDir: null }), expect: 'reached' }],
  [
    'odd name Input-File',
    { tool: 'odd_names', args: (w) => ({ 'Input-File': `${w}/out/o.txt` }), expect: OUTSIDE },
  ],
  [
    'odd name DEST, relative',
    { tool: 'odd_names', args: () => ({ DEST: 'copy.txt' }), expect: /relative path/ },
  ],
  [
    'odd name workDir, ..',
    { tool: 'odd_names', args: (w) => ({ workDir: `${w}/in/../out` }), expect: /\.\. segment/ },
  ],
  ['odd name src', { tool: 'odd_names', args: (w) => ({ src: `${w}/in/secret` }), expect: DENIED }],
  [
    'query holding an absolute path',
    { tool: 'odd_names', args: () => ({ query: '/etc/passwd' }), expect: OUTSIDE },
  ],
  [
    'query holding //',
    { tool: 'odd_names', args: () => ({ query: '//etc/passwd' }), expect: OUTSIDE },
  ],
  [
    'query holding $HOME',
    { tool: 'odd_names', args: () => ({ query: '$HOME/.ssh/id_rsa' }), expect: /relative path/ },
  ],
  [
    'query holding ../',
    { tool: 'odd_names', args: () => ({ query: '../../.ssh/id_rsa' }), expect: /relative path/ },
  ],
  [
    'query holding a padded path',
    { tool: 'odd_names', args: (w) => ({ query: ` ${w}/out/o.txt` }), expect: /relative path/ },
  ],
  // A `..` takes the name before it away as text, white space and line ends and all: the first
  // name's white space says nothing then (an attacker pass found these read the file).
  [
    'query holding a spaced first name and ..',
    {
      tool: 'odd_names',
      args: (w) => ({ query: `/no such dir/..${w}/out/o.txt` }),
      expect: /\.\. segment/,
    },
  ],
  [
    'query holding a tab in the first name and ..',
    {
      tool: 'odd_names',
      args: (w) => ({ query: `/x\ty/..${w}/out/o.txt` }),
      expect: /\.\. segment/,
    },
  ],
  [
    'query holding a line end and ..',
    {
      tool: 'odd_names',
      args: (w) => ({ query: `${w}/in/a\nb/../../out/o.txt` }),
      expect: /\.\. segment/,
    },
  ],
  [
    'query holding a relative path that leaves its directory',
    {
      tool: 'odd_names',
      args: () => ({ query: 'sub dir/../../out/o.txt' }),
      expect: /relative path/,
    },
  ],
  [
    'query holding a new name with a line end, outside',
    { tool: 'odd_names', args: (w) => ({ query: `${w}/out/new\nfile` }), expect: OUTSIDE },
  ],
  [
    'query holding a path after U+0085 (Python strips it)',
    {
      tool: 'odd_names',
      args: (w) => ({ query: `\u0085${w}/out/o.txt` }),
      expect: /relative path/,
    },
  ],
  [
    'query holding a wrapped file: URL (urllib unwraps it)',
    {
      tool: 'odd_names',
      args: (w) => ({ query: `<URL:file://${w}/out/o.txt>` }),
      expect: /wrapped/,
    },
  ],
  [
    "query holding a variable Go's os.ExpandEnv empties",
    { tool: 'odd_names', args: (w) => ({ query: `$1${w}/out/o.txt` }), expect: /relative path/ },
  ],
  [
    'query holding two variables Go empties',
    { tool: 'odd_names', args: (w) => ({ query: `$A$B${w}/out/o.txt` }), expect: /relative path/ },
  ],
  [
    'query holding a line only Python ends, then ..',
    {
      tool: 'odd_names',
      args: (w) => ({ query: `a b\u0085c/../../../../../../../..${w}/out/o.txt` }),
      expect: /relative path/,
    },
  ],
  [
    'query holding percent-encoded dots',
    {
      tool: 'odd_names',
      args: () => ({ query: '%2e%2e/%2e%2e/out/o.txt' }),
      expect: /relative path/,
    },
  ],
  [
    'query holding a bad escape Python leaves among good ones',
    {
      tool: 'odd_names',
      args: (w) => ({ query: `%2f${w.slice(1)}/out/x%/../o.txt` }),
      expect: /relative path/,
    },
  ],
  [
    'content that is code with ../.. imports',
    {
      tool: 'odd_names',
      args: () => ({ content: "/** header */\nimport a from '../../lib';\n" }),
      expect: 'reached',
    },
  ],
  [
    'content holding a file: URI',
    { tool: 'odd_names', args: (w) => ({ content: `FILE://${w}/out/o.txt` }), expect: OUTSIDE },
  ],
  [
    'content holding ~',
    { tool: 'odd_names', args: () => ({ content: '~root/.bashrc' }), expect: /starts with ~/ },
  ],
  [
    'content that is text',
    {
      tool: 'odd_names',
      args: () => ({ content: '// TODO: read /etc/passwd later', query: 'select 1' }),
      expect: 'reached',
    },
  ],
  [
    'enum value',
    { tool: 'enum_and_counts', args: () => ({ output: 'json', file_count: 3 }), expect: 'reached' },
  ],
  [
    'enum place, a path instead',
    { tool: 'enum_and_counts', args: () => ({ output: '../x' }), expect: /relative path/ },
  ],
  [
    'a count holding a path',
    { tool: 'enum_and_counts', args: () => ({ file_count: '/etc' }), expect: OUTSIDE },
  ],
  [
    'no properties: path-like name',
    { tool: 'no_properties', args: () => ({ anything_path: 'rel' }), expect: /relative path/ },
  ],
  [
    'no properties: deep value',
    { tool: 'no_properties', args: () => ({ x: { y: [{ z: '/etc/shadow' }] } }), expect: OUTSIDE },
  ],
  [
    'a tool never listed',
    { tool: 'not_listed', args: (w) => ({ path: `${w}/out` }), expect: OUTSIDE },
  ],
  [
    'a path-like name that holds the letters of "uri"',
    {
      tool: 'not_listed',
      args: () => ({ security_policy_file: 'sub/policy.yaml' }),
      expect: /relative path/,
    },
  ],
  [
    'a name about paths and URLs, a relative path',
    { tool: 'not_listed', args: () => ({ pathOrUrl: 'out/o.txt' }), expect: /relative path/ },
  ],
  [
    'a name about paths and URLs, a URL',
    { tool: 'not_listed', args: () => ({ pathOrUrl: 'https://example.com/a' }), expect: 'reached' },
  ],
  [
    'a name about paths and URLs, a scheme without an authority',
    { tool: 'not_listed', args: () => ({ pathOrUrl: 'foo:bar/../../x' }), expect: /relative path/ },
  ],
  [
    'a tool never listed, a number',
    { tool: 'not_listed', args: () => ({ target: 3 }), expect: /holds a number/ },
  ],
];

/** Against the real filesystem server. */
const FS: [string, Row][] = [
  [
    'several paths, one denied',
    {
      tool: 'read_multiple_files',
      args: (w) => ({ paths: [`${w}/in/a.txt`, `${w}/in/secret/s.txt`] }),
      expect: DENIED,
    },
  ],
  [
    'several paths, one not a string',
    {
      tool: 'read_multiple_files',
      args: (w) => ({ paths: [`${w}/in/a.txt`, { p: 1 }] }),
      expect: /argument paths\[1\]: it holds an object/,
    },
  ],
  [
    'an argument the tool does not declare',
    {
      tool: 'read_text_file',
      args: (w) => ({ path: `${w}/in/a.txt`, extra: `${w}/out/o.txt` }),
      expect: OUTSIDE,
    },
  ],
  [
    'move out',
    {
      tool: 'move_file',
      args: (w) => ({ source: `${w}/in/a.txt`, destination: `${w}/out/a.txt` }),
      expect: OUTSIDE,
    },
  ],
  [
    'an edit whose text starts with //',
    {
      tool: 'edit_file',
      args: (w) => ({
        path: `${w}/in/code.js`,
        edits: [{ oldText: '// TODO', newText: '// done' }],
      }),
      expect: 'reached',
    },
  ],
  [
    'a write whose content starts with /**',
    {
      tool: 'write_file',
      args: (w) => ({ path: `${w}/in/new.js`, content: '/** header */\nexport {};\n' }),
      expect: 'reached',
    },
  ],
  [
    'a listing',
    { tool: 'directory_tree', args: (w) => ({ path: `${w}/in/sub` }), expect: 'reached' },
  ],
];

function judge(
  t: Test,
  what: string,
  row: Row,
  r: { text: string; isError: boolean },
  reached: (text: string) => boolean,
): void {
  t.notOk(r.text.includes(MARK), `${what}: nothing forbidden comes back`);
  if (row.expect === 'reached') {
    t.ok(reached(r.text), `${what}: reached the server (${r.text.slice(0, 160)})`);
  } else {
    t.equal(r.isError, true, `${what}: an error`);
    t.match(r.text, /^mcp-roots-proxy refused /, `${what}: refused by the proxy`);
    t.match(r.text, row.expect, `${what}: ${r.text.slice(0, 300)}`);
  }
}

void t.test('schema shapes through the proxy', async (t) => {
  const dir = ownedShortDir(t);
  const w = join(dir, 'w');
  makeWorkspace(w);
  const d = await startDaemon(t, policy(w), { dir });
  const [shapes, fs] = await Promise.all([
    startProxiedShapes(t, { server: 'shapes', socket: d.socket }),
    startProxiedFs(t, { server: 'fs', socket: d.socket }),
  ]);
  await waitFor(async () => (await fs.allowed()).length === 1, 10_000, 'the first list');
  await waitFor(() => shapes.stderr().includes('learnt'), 10_000, 'the fixture’s tools');

  for (const [what, row] of SHAPES) {
    const r = await shapes.call(row.tool, row.args(w));
    judge(t, what, row, r, (text) => text.startsWith(`reached ${row.tool} `));
  }
  for (const [what, row] of FS) {
    const r = await fs.call(row.tool, row.args(w));
    judge(t, what, row, r, (text) => !r.isError && !text.startsWith('mcp-roots-proxy'));
  }
  t.equal(
    readFileSync(join(w, 'in/code.js'), 'utf8'),
    '// done\nconst x = 1;\n',
    'the edit landed',
  );
  t.comment(`${SHAPES.length} fixture rows, ${FS.length} filesystem-server rows`);
  t.notMatch(shapes.stderr() + fs.stderr(), /lost mcp-rootsd/, 'the daemon link stayed up');
});
