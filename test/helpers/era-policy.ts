/** The files and policy the era tests share: one writable root, one read-only root, one place outside. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface EraWorld {
  /** The directory holding `in` (read-write root), `ro` (read-only root) and `out` (no root). */
  w: string;
  /** The policy's roots as URIs, in the policy's order. */
  rootUris: string[];
  /** The policy text, giving those roots to each of `servers`. */
  policy: string;
}

export function eraWorld(dir: string, servers: string[]): EraWorld {
  const w = join(dir, 'w');
  for (const d of ['in', 'ro', 'out']) mkdirSync(join(w, d), { recursive: true });
  writeFileSync(join(w, 'in', 'a.txt'), 'inside');
  writeFileSync(join(w, 'ro', 'r.txt'), 'read-only');
  writeFileSync(join(w, 'out', 'secret.txt'), 'secret');
  const roots = `    roots:\n      - path: ${w}/in\n      - path: ${w}/ro\n        readOnly: true\n`;
  return {
    w,
    rootUris: [pathToFileURL(`${w}/in`).href, pathToFileURL(`${w}/ro`).href],
    policy: `version: 1\nservers:\n${servers.map((s) => `  ${s}:\n${roots}`).join('')}`,
  };
}
