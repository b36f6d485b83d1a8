/** The built executables, for tests that run them as real child processes. */
import { existsSync, statSync } from 'node:fs';
import { REPO, repoPath } from './repo.js';

export { REPO };

const BINS = {
  daemon: ['dist/daemon/main.js', 'daemon'],
  rootsctl: ['dist/cli/main.js', 'cli'],
  proxy: ['dist/proxy/main.js', 'proxy'],
} as const;

/**
 * The absolute path of a built bin. `npm test` builds before tap runs; a bare `tap` run after
 * editing sources would test stale code, so that fails loudly instead.
 */
export function bin(name: keyof typeof BINS): string {
  const [rel] = BINS[name];
  const file = repoPath(rel);
  if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first`);
  return file;
}

/** Throw if the build is older than a source file it comes from. */
export function assertFreshBuild(...sources: string[]): void {
  for (const src of sources) {
    const out = repoPath('dist/' + src.replace(/\.ts$/, '.js'));
    if (statSync(repoPath(src)).mtimeMs > statSync(out).mtimeMs) {
      throw new Error(`dist/ is older than ${src}: run \`npm run build\` first`);
    }
  }
}
