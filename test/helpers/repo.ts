/**
 * Where the repository is, for tests and helpers that read its files. Tests run compiled, from
 * `dist/test/` (see package.json's `tap` section), so a path relative to a test file's own URL
 * would point into `dist/`; every such path starts from here instead.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest directory above this file that holds a package.json: the repository's root. */
function findRepo(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
  return dir;
}

/** The repository root, without a trailing slash. */
export const REPO = findRepo();

/** A path inside the repository, from its root. */
export const repoPath = (rel: string): string => join(REPO, rel);

/** The test fixtures (scripts and policies, never compiled), in the source tree. */
export const FIXTURES = repoPath('test/fixtures');

/** A fixture server in `test/fixtures/servers/` by file name. */
export const fixtureServer = (name: string): string => join(FIXTURES, 'servers', name);
