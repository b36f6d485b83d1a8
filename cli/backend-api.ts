/**
 * What list, check and explain ask of the place their answers come from: the daemon, or a policy
 * evaluated offline (cli/offline.ts, loaded only when `--config` asks for it).
 */
import type { Access, CheckResult, ExplainResult } from '../common/types.js';
import type { ListRootsResult } from '../protocol/methods.js';

export interface Backend {
  list(server: string): Promise<ListRootsResult>;
  check(server: string, path: string, access: Access): Promise<CheckResult>;
  explain(server: string): Promise<ExplainResult>;
  /** The server names the policy has entries for, sorted (for "did you mean"). */
  serverNames(): Promise<string[]>;
  /**
   * Why there is no policy to answer from, when there is none: the daemon has never loaded a
   * valid one (an empty answer would read as "the policy names no servers").
   */
  noPolicy(): Promise<string | undefined>;
  /** What the daemon's state adds to an answer about roots (lockdown, a refused policy), or ''. */
  stateNotes(): Promise<string>;
  close(): Promise<void>;
}
