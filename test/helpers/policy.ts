/** Helpers for engine tests: a real fixture tree and a context pointing at it. */
import { mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  loadAndResolve,
  nodeFs,
  parsePolicyText,
  type PolicyContext,
} from '../../policies/index.js';

export const NOW = Date.parse('2026-11-29T12:00:00Z');

/** A context whose home is `<dir>/home`, with a fixed clock. */
export function contextFor(dir: string, overrides: Partial<PolicyContext> = {}): PolicyContext {
  return {
    home: join(dir, 'home'),
    env: { PROJECT: join(dir, 'home/projects/alpha') },
    now: NOW,
    fs: nodeFs(),
    stateDir: join(dir, 'state'),
    runtimeDir: join(dir, 'run'),
    ...overrides,
  };
}

/** Create directories (names ending in `/`) and files under `dir`. */
export function makeTree(dir: string, paths: string[]): void {
  for (const p of paths) {
    const full = join(dir, p);
    if (p.endsWith('/')) mkdirSync(full, { recursive: true });
    else {
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, 'x');
    }
  }
}

/** Write a policy file (YAML text) and evaluate it. */
export async function evaluate(
  dir: string,
  yaml: string,
  ctx = contextFor(dir),
  name = 'mcp-roots.yaml',
) {
  const file = join(dir, name);
  writeFileSync(file, yaml);
  return loadAndResolve({ configFile: file }, ctx);
}

/** The file:// URI of a path under the (canonical) fixture dir. */
export function uri(dir: string, rel: string): string {
  return pathToFileURL(join(realpathSync(dir), rel)).href;
}

/** Where the parser tests say a policy lives (the parser never reads it; messages name it). */
export const PARSED_FILE = '/home/u/.config/mcp-roots.yaml';

/** The first error of parsing `text` as [`line:column`, message], or undefined when it parses. */
export function firstError(
  text: string | Buffer,
  name = PARSED_FILE,
): [string, string] | undefined {
  const r = parsePolicyText(text, name);
  const e = r.errors[0];
  return e === undefined ? undefined : [`${e.line}:${e.column}`, e.message];
}
