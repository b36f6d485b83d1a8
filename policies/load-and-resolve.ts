/** Loading and resolving in one call, from file names to a resolved policy: for the offline CLI, benches and tests. */
import type { PolicyError } from '../common/types.js';
import { loadGrantsSource, loadPolicySources } from './load.js';
import type { LoadedSources, PolicyContext, ResolvedPolicy } from './model.js';
import { resolvePolicy } from './resolve.js';

export interface LoadedAndResolved {
  sources: LoadedSources;
  grants: LoadedSources | undefined;
  errors: PolicyError[];
  warnings: PolicyError[];
  resolved: ResolvedPolicy;
}

/**
 * Load and resolve. Files with errors contribute nothing (the daemon keeps its last good
 * snapshot instead; offline there is none, so an invalid policy resolves to no roots), but every
 * error and warning is reported at once, as far as the files parse.
 */
export async function loadAndResolve(
  input: { configFile: string; grantsFile?: string },
  ctx: PolicyContext,
): Promise<LoadedAndResolved> {
  const sources = await loadPolicySources(input.configFile, ctx);
  const grants =
    input.grantsFile === undefined ? undefined : await loadGrantsSource(input.grantsFile, ctx);
  const usable = [
    ...(sources.errors.length === 0 ? sources.files : []),
    ...(grants && grants.errors.length === 0 ? grants.files : []),
  ];
  const options = {
    includePatterns: sources.includePatterns,
    extraPolicyFiles: [input.configFile, ...(input.grantsFile ? [input.grantsFile] : [])],
  };
  const resolved = await resolvePolicy(usable, ctx, options);
  const errors = [...sources.errors, ...(grants?.errors ?? [])];
  // With errors, the warnings a fix would bring (a missing root, an expired one) come from
  // resolving everything that loaded, the schema's salvage included; that resolution answers
  // nothing else.
  const reported =
    errors.length === 0
      ? resolved
      : await resolvePolicy(
          [
            ...sources.files,
            ...sources.salvaged,
            ...(grants ? [...grants.files, ...grants.salvaged] : []),
          ],
          ctx,
          options,
        );
  return {
    sources,
    grants,
    errors,
    warnings: [...sources.warnings, ...(grants?.warnings ?? []), ...reported.warnings],
    resolved,
  };
}
