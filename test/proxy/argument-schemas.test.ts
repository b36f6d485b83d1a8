/**
 * Where the proxy finds paths in a call by the tool's input schema: every shape a schema may
 * take (plain, nested, arrays, unions, references, zod's output), as a table. Driven directly;
 * test/hardening/ drives the same through the proxy.
 */
import t from 'tap';
import { toJsonSchemaCompat } from '@modelcontextprotocol/sdk/server/zod-json-schema-compat.js';
import { z } from 'zod';
import { pathValues, type PathValue } from '../../proxy/arguments.js';

const zod = (shape: z.ZodRawShape): unknown =>
  toJsonSchemaCompat(z.object(shape), { strictUnions: true, pipeStrategy: 'input' });

interface Row {
  what: string;
  schema: unknown;
  args: Record<string, unknown>;
  /** The places found, or a refusal's reason. */
  expect: string[] | RegExp;
  declared?: string[];
}

const str = { type: 'string' };
const props = (p: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: 'object',
  properties: p,
  ...extra,
});

const ROWS: Row[] = [
  { what: 'a plain string', schema: props({ path: str }), args: { path: '/a' }, expect: ['path'] },
  {
    what: 'a zod union of string and string[]',
    schema: zod({ target: z.union([z.string(), z.array(z.string())]) }),
    args: { target: ['a', '/b'] },
    expect: ['target[0]', 'target[1]'],
  },
  {
    what: 'zod nullable: a null is fine',
    schema: zod({ file_path: z.string().nullable() }),
    args: { file_path: null },
    expect: [],
  },
  {
    what: 'Python str | None',
    schema: props({ repo_path: { anyOf: [str, { type: 'null' }], default: null } }),
    args: { repo_path: 'rel' },
    expect: ['repo_path'],
  },
  {
    what: 'a type list',
    schema: props({ outputDir: { type: ['string', 'null'] } }),
    args: { outputDir: '/o' },
    expect: ['outputDir'],
  },
  {
    what: 'no type at all',
    schema: props({ notebookPath: { description: 'x' } }),
    args: { notebookPath: 'n.ipynb' },
    expect: ['notebookPath'],
  },
  {
    what: '$ref into $defs',
    schema: props({ where: { $ref: '#/$defs/L' } }, { $defs: { L: props({ folder: str }) } }),
    args: { where: { folder: 'f' } },
    expect: ['where.folder'],
  },
  {
    what: '$ref into definitions, escaped pointer',
    schema: props(
      { a: { $ref: '#/definitions/x~1y' } },
      { definitions: { 'x/y': props({ dest: str }) } },
    ),
    args: { a: { dest: '/d' } },
    expect: ['a.dest'],
  },
  {
    what: 'a $ref cycle is open, and ends',
    schema: props(
      { spec: { $ref: '#/$defs/A' } },
      { $defs: { A: { $ref: '#/$defs/B' }, B: { $ref: '#/$defs/A' } } },
    ),
    args: { spec: { path: 'p', n: 1 } },
    expect: ['spec.path'],
  },
  {
    what: 'a non-local $ref is open: a path-like name holding a number is refused',
    schema: props({ dir: { $ref: 'https://example.com/s.json' } }),
    args: { dir: 7 },
    expect: /holds a number where a path is expected/,
  },
  {
    what: 'a recursive tree walked with its values',
    schema: {
      $ref: '#/$defs/N',
      $defs: { N: props({ dir: str, children: { type: 'array', items: { $ref: '#/$defs/N' } } }) },
    },
    args: { dir: '/a', children: [{ dir: '/b', children: [{ dir: '/c' }] }] },
    expect: ['dir', 'children[0].dir', 'children[0].children[0].dir'],
  },
  {
    what: 'allOf spreads properties over branches',
    schema: { allOf: [props({ a: str }), props({ source: str })] },
    args: { source: 's', a: 'text' },
    expect: ['source'],
  },
  {
    what: 'a discriminated union (oneOf of objects)',
    schema: zod({
      spec: z.discriminatedUnion('kind', [
        z.object({ kind: z.literal('file'), filename: z.string() }),
        z.object({ kind: z.literal('inline'), text: z.string() }),
      ]),
    }),
    args: { spec: { kind: 'file', filename: 'x' } },
    expect: ['spec.filename'],
  },
  {
    what: 'nested objects',
    schema: props({ options: props({ cwd: str, depth: { type: 'integer' } }) }),
    args: { options: { cwd: '/w', depth: 3 } },
    expect: ['options.cwd'],
  },
  {
    what: 'arrays of objects',
    schema: props({ files: { type: 'array', items: props({ path: str, content: str }) } }),
    args: {
      files: [
        { path: '/a', content: '// x' },
        { path: '/b', content: 'y' },
      ],
    },
    expect: ['files[0].path', 'files[1].path'],
  },
  {
    what: 'tuple items (prefixItems)',
    schema: props({ pair: { type: 'array', prefixItems: [str, { type: 'integer' }] } }),
    args: { pair: ['/x', 1] },
    expect: ['pair[0]'],
  },
  {
    what: 'a value that is a path, under any name',
    schema: props({ query: str, content: str, note: str }),
    args: { query: '/etc/passwd', content: '// TODO', note: 'file:///etc/shadow' },
    expect: ['query', 'note'],
  },
  {
    what: 'a listed enum value is no path; another value is',
    schema: props({ output: { type: 'string', enum: ['json', 'text'] } }),
    args: { output: 'json' },
    expect: [],
  },
  {
    what: 'an enum value not listed',
    schema: props({ output: { type: 'string', enum: ['json', 'text'] } }),
    args: { output: '../x' },
    expect: ['output'],
  },
  {
    what: 'a number where the schema says number',
    schema: props({ file_count: { type: 'integer' } }),
    args: { file_count: 3 },
    expect: [],
  },
  {
    what: 'a number where the schema says string',
    schema: props({ path: str }),
    args: { path: 3 },
    expect: /argument path.*holds a number/,
  },
  {
    what: 'a boolean in an unlisted tool',
    schema: undefined,
    args: { include_files: true },
    expect: /holds a boolean/,
  },
  {
    what: 'an unlisted tool: names and values',
    schema: undefined,
    args: { path: 'p', n: 3, nested: { target: 't', q: '~/x' } },
    expect: ['path', 'nested.target', 'nested.q'],
  },
  {
    what: 'arguments the schema does not list',
    schema: props({ path: str }, { additionalProperties: false }),
    args: { path: '/a', extra_file: 'e' },
    expect: ['path', 'extra_file'],
  },
  {
    what: 'a format: uri argument',
    schema: props({ link: { type: 'string', format: 'uri' } }),
    args: { link: 'https://example.com/' },
    expect: ['link'],
  },
  {
    what: 'the policy lists the paths: only those, nothing by value',
    schema: props({ text: str, path: str }),
    args: { text: 'rel', path: '/a', other: '/etc/passwd' },
    declared: ['text'],
    expect: ['text'],
  },
  {
    what: 'the policy lists the paths: a key a server folds to one of them is one',
    schema: props({ location: str }),
    args: { LOCATION: '/a', 'Locat\u0130on': '/b', 'location\u0000': 'c', other: '/etc/passwd' },
    declared: ['location'],
    expect: ['LOCATION', '"Locat\u0130on"', '"location\\u0000"'],
  },
  {
    what: 'odd member names are shown quoted',
    schema: undefined,
    args: { 'a b': { 'Input-File': 'x' } },
    expect: ['"a b"["Input-File"]'],
  },
];

void t.test('paths found through schema shapes', (t) => {
  for (const row of ROWS) {
    const r = pathValues(row.args, row.schema, row.declared);
    if (row.expect instanceof RegExp) {
      t.ok(!Array.isArray(r), `${row.what}: refused`);
      if (!Array.isArray(r))
        t.match(`${r.path}: ${r.reason}`, row.expect, `${row.what}: ${r.reason}`);
    } else {
      t.ok(Array.isArray(r), `${row.what}: not refused`);
      if (Array.isArray(r))
        t.same(
          r.map((v) => v.where),
          row.expect,
          row.what,
        );
    }
  }
  t.end();
});

void t.test('a uri place and a path place', (t) => {
  const r = pathValues(
    { link: 'file:///a', path: '/b' },
    props({ link: { type: 'string', format: 'uri' }, path: str }),
  ) as PathValue[];
  t.same(r, [
    { value: 'file:///a', uri: true, where: 'link' },
    { value: '/b', uri: false, where: 'path' },
  ]);
  t.end();
});
