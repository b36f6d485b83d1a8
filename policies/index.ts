/** The policy engine: pure functions from policy files and a view of the filesystem to roots. */
export { parsePolicyText } from './parse.js';
export {
  loadPolicySources,
  loadGrantsSource,
  lookAtGlob,
  prepareParse,
  sameGlobLook,
} from './load.js';
export { whereNow } from './own-state.js';
export { resolvePolicy, type ResolveOptions } from './resolve.js';
export { limitFs, nodeFs, nodeFsSync, memoFs, noteReads, withReads } from './fs.js';
export { openPolicyFile, readPolicyFile } from './read-policy-file.js';
export { MAX_POLICY_BYTES } from './parse.js';
export { MAX_GRANT_SECONDS } from './grants-shape.js';
export {
  mapBounded,
  MAX_POLICY_FILES,
  MAX_POLICY_TOTAL_BYTES,
  POLICY_READS_IN_FLIGHT,
} from './policy-caps.js';
export { loadAndResolve, type LoadedAndResolved } from './load-and-resolve.js';
export { LinkPins } from './anchor.js';
export { canonicalizeLoose, compareUtf8, toUri } from './paths.js';
export { throughProc } from './process-paths.js';
export { isGlob } from './expand.js';
export { expandGlob } from './glob.js';
export {
  entersBelow,
  includeBase,
  includeDepth,
  includeMatcher,
  includeWatchDir,
  nearestExisting,
} from './watch-targets.js';
export { combinedHash, fileHash } from './hash.js';
export type * from './model.js';
export { coverageOf, serverCoverage } from './server-coverage.js';
export { watchTargets, type RootWatches } from './watch-first.js';
