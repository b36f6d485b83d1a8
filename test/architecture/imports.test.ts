/**
 * The import graph of the source tree, read from the files themselves: no cycle, no layer
 * importing upward or sideways (docs/architecture.md, "The layers"), and the engine reached
 * only through policies/index.ts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import t from 'tap';
import { REPO } from '../helpers/repo.js';

/** Which layers each may import (its own files aside); the table in docs/architecture.md. */
const MAY_IMPORT: Record<string, readonly string[]> = {
  common: [],
  policies: ['common'],
  protocol: ['common'],
  daemon: ['common', 'policies', 'protocol'],
  cli: ['common', 'policies', 'protocol'],
  proxy: ['common', 'protocol'],
  // Above every layer: the library's entry and the benchmarks.
  'index.ts': ['common', 'policies', 'protocol', 'proxy'],
  bench: ['common', 'policies', 'protocol', 'daemon', 'cli', 'proxy'],
};

/** Source files (repository-relative) to the source files they import. */
type Graph = Map<string, string[]>;

const SPECIFIER =
  /(?:^|[\s;])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|^import\s*['"]([^'"]+)['"]/gm;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(REPO, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(REPO, join(e.parentPath, e.name)));
}

/** The relative imports of each file, as repository-relative paths (`.js` read as `.ts`). */
function readGraph(files: string[]): Graph {
  const graph: Graph = new Map();
  for (const file of files) {
    const text = readFileSync(join(REPO, file), 'utf8');
    const out: string[] = [];
    for (const m of text.matchAll(SPECIFIER)) {
      const spec = m[1] ?? m[2] ?? m[3]!;
      if (!spec.startsWith('.')) continue;
      out.push(relative(REPO, resolve(REPO, dirname(file), spec)).replace(/\.js$/, '.ts'));
    }
    graph.set(file, out);
  }
  return graph;
}

/** The layer a file belongs to: its top directory, or the file's own name at the top. */
function layerOf(file: string): string {
  return file.includes('/') ? file.slice(0, file.indexOf('/')) : file;
}

/** Every cycle found by a depth-first walk, each as the files around it. */
export function cycles(graph: Graph): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (file: string) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      const s = state.get(next);
      if (s === 'open') found.push([...stack.slice(stack.indexOf(next)), next]);
      else if (s === undefined) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
  return found;
}

/** Imports that break the layer table or reach into the engine past its index. */
export function violations(graph: Graph): string[] {
  const out: string[] = [];
  for (const [file, imports] of graph) {
    const from = layerOf(file);
    const allowed = MAY_IMPORT[from];
    if (allowed === undefined) continue;
    for (const target of imports) {
      const to = layerOf(target);
      if (to === from || MAY_IMPORT[to] === undefined) continue;
      if (!allowed.includes(to))
        out.push(`${file} imports ${target}: ${from} may not import ${to}`);
      else if (to === 'policies' && target !== 'policies/index.ts') {
        out.push(`${file} imports ${target}: outside policies/, import policies/index.ts`);
      }
    }
  }
  return out;
}

void t.test('the checks see what they are for', (t) => {
  const cases: { name: string; graph: [string, string[]][]; cycles: number; bad: RegExp[] }[] = [
    {
      name: 'a clean tree',
      graph: [
        ['cli/a.ts', ['common/b.ts']],
        ['common/b.ts', []],
      ],
      cycles: 0,
      bad: [],
    },
    {
      name: 'a two-file cycle',
      graph: [
        ['proxy/a.ts', ['proxy/b.ts']],
        ['proxy/b.ts', ['proxy/a.ts']],
      ],
      cycles: 1,
      bad: [],
    },
    {
      name: 'a cycle across layers',
      graph: [
        ['common/a.ts', ['protocol/b.ts']],
        ['protocol/b.ts', ['common/a.ts']],
      ],
      cycles: 1,
      bad: [/common may not import protocol/],
    },
    {
      name: 'a file importing itself',
      graph: [['daemon/a.ts', ['daemon/a.ts']]],
      cycles: 1,
      bad: [],
    },
    {
      name: 'the engine importing the daemon',
      graph: [
        ['policies/a.ts', ['daemon/b.ts']],
        ['daemon/b.ts', []],
      ],
      cycles: 0,
      bad: [/policies may not import daemon/],
    },
    {
      name: 'the CLI importing the proxy',
      graph: [
        ['cli/a.ts', ['proxy/b.ts']],
        ['proxy/b.ts', []],
      ],
      cycles: 0,
      bad: [/cli may not import proxy/],
    },
    {
      name: 'the proxy importing the daemon',
      graph: [
        ['proxy/a.ts', ['daemon/b.ts']],
        ['daemon/b.ts', []],
      ],
      cycles: 0,
      bad: [/proxy may not import daemon/],
    },
    {
      name: 'a deep import into the engine',
      graph: [
        ['daemon/a.ts', ['policies/paths.ts']],
        ['policies/paths.ts', []],
      ],
      cycles: 0,
      bad: [/import policies\/index.ts/],
    },
    {
      name: 'the engine through its door',
      graph: [
        ['daemon/a.ts', ['policies/index.ts']],
        ['policies/index.ts', []],
      ],
      cycles: 0,
      bad: [],
    },
  ];
  for (const c of cases) {
    const graph: Graph = new Map(c.graph);
    t.equal(cycles(graph).length, c.cycles, `${c.name}: cycles`);
    const found = violations(graph);
    t.equal(found.length, c.bad.length, `${c.name}: violations ${JSON.stringify(found)}`);
    c.bad.forEach((re, i) => t.match(found[i], re, c.name));
  }
  t.end();
});

void t.test('the source tree has no import cycle and no upward import', (t) => {
  const files = [
    'index.ts',
    ...['common', 'policies', 'protocol', 'daemon', 'cli', 'proxy', 'bench'].flatMap(sourceFiles),
  ];
  const graph = readGraph(files);
  t.ok(graph.size > 100, `read ${graph.size} files`);
  // Every import must land on a file of the tree: a missed one would hide an edge.
  const missing = [...graph].flatMap(([f, imports]) =>
    imports.filter((i) => i.endsWith('.ts') && !graph.has(i)).map((i) => `${f} -> ${i}`),
  );
  t.same(missing, [], 'every relative import resolves to a source file');
  t.same(cycles(graph), [], 'no import cycle');
  t.same(violations(graph), [], 'every import follows the layer table');
  t.end();
});
