/** The policy engine: pure functions from policy files and a view of the filesystem to roots. */
export { parsePolicyText } from './parse.js';
export { loadPolicySources, loadGrantsSource } from './load.js';
export { resolvePolicy, type ResolveOptions } from './resolve.js';
export { nodeFs, memoFs } from './fs.js';
export { evaluatePolicy, type Evaluation } from './evaluate.js';
export type * from './model.js';
