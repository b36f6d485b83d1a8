/**
 * How a policy comes to cover a server name: by the name itself, by a pattern written for a family
 * of names (`work-*`), or only by a catch-all (`'*'`), which matches a typo in `--server` as
 * readily as a name it was meant for. The proxy warns about the last (README, Troubleshooting).
 */
import type { ServerCoverage } from '../common/types.js';
import type { ParsedPolicyFile } from './model.js';
import { compileServerPattern, hasWildcard, unescapeStars } from './server-pattern.js';

/** A pattern made of stars alone matches every name. */
function matchesEveryName(pattern: string): boolean {
  return /^\*+$/.test(pattern);
}

/** How the blocks of `files` (policy files and grants) cover `server`; undefined when none does. */
export function serverCoverage(
  files: readonly ParsedPolicyFile[],
  server: string,
): ServerCoverage | undefined {
  let coverage: ServerCoverage | undefined;
  for (const file of files) {
    for (const { pattern } of file.servers) {
      if (!hasWildcard(pattern)) {
        if (unescapeStars(pattern) === server) return 'name';
      } else if (matchesEveryName(pattern)) {
        coverage ??= 'catch-all';
      } else if (compileServerPattern(pattern)(server)) {
        coverage = 'pattern';
      }
    }
  }
  return coverage;
}

/** `{coveredBy}` for an explain result, or nothing when no block covers `server`. */
export function coverageOf(
  files: readonly ParsedPolicyFile[],
  server: string,
): { coveredBy?: ServerCoverage } {
  const coveredBy = serverCoverage(files, server);
  return coveredBy === undefined ? {} : { coveredBy };
}
