/** This installation's root directory and version, found from the running file. */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: { root: string; version: string } | undefined;

function find(): { root: string; version: string } {
  // Sources run from <root>/common, builds from <root>/dist/common: walk up to our package.json.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'mcp-roots') return { root: dir, version: pkg.version ?? '0.0.0' };
    }
    const up = dirname(dir);
    if (up === dir) return { root: dirname(fileURLToPath(import.meta.url)), version: '0.0.0' };
    dir = up;
  }
}

/** The directory holding mcp-roots' package.json. */
export function packageRoot(): string {
  cached ??= find();
  return cached.root;
}

/** mcp-roots' version. */
export function packageVersion(): string {
  cached ??= find();
  return cached.version;
}
