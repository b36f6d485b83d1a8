/** The policy engine's data model: parsed files, the evaluation context, the watch plan. */
import type {
  AskRule,
  CheckResult,
  ExplainResult,
  LaunchRule,
  PolicyError,
  Root,
  ToolRule,
  Writer,
} from '../common/types.js';

/** Where a YAML node stands: absolute file path, 1-based line and column. */
export interface Pos {
  file: string;
  line: number;
  column: number;
}

export interface DenyEntry {
  /** The path or pattern as written (before `~`/`$VAR` expansion). */
  path: string;
  access: 'all' | 'write';
  pos: Pos;
  /** Set by the loader: the absolute path or pattern after `~`, `$VAR` and relative expansion. */
  abs?: string;
}

export interface RootEntry {
  /** The path or glob as written (before `~`/`$VAR` expansion). */
  path: string;
  name?: string;
  readOnly?: boolean;
  /** Milliseconds since the epoch, parsed from `expires`. */
  expires?: number;
  kind?: 'directory' | 'file' | 'any';
  pos: Pos;
  /** Position of the `path` value node (for expansion errors). */
  pathPos: Pos;
  /** Set by the loader: the absolute path or glob after `~`, `$VAR` and relative expansion. */
  abs?: string;
}

export interface ServerBlock {
  pattern: string;
  pos: Pos;
  readOnly?: boolean;
  /** `ask:` of the block, or the file's top-level `ask:` when the block has none. */
  ask?: AskRule;
  roots: RootEntry[];
  deny: DenyEntry[];
  tools: Record<string, ToolRule>;
  launch?: LaunchRule;
  /**
   * `sandbox:` as written: true, or extra paths (not yet expanded), the network setting and
   * whether Unix sockets are allowed.
   */
  sandbox?: { read: string[]; write: string[]; network?: boolean; unixSockets?: boolean };
}

/** One policy file after YAML parsing and schema validation (paths not yet expanded). */
export interface ParsedPolicyFile {
  /** Absolute path as given (not realpath'd), as messages name the file. */
  file: string;
  /**
   * The directory its relative paths are taken against (docs/policy.md rule 1), set by the load:
   * the main file's own directory (a link's own), an included file's real directory. Absent: the
   * directory of `file`.
   */
  dir?: string;
  sha256: string;
  include: { pattern: string; pos: Pos }[];
  defaults: { readOnly: boolean };
  deny: DenyEntry[];
  servers: ServerBlock[];
}

export interface ParseResult {
  policy?: ParsedPolicyFile;
  /**
   * For a file the schema refused: what it accepted of it (policies/schema-salvage.ts), so that
   * the checks after the schema report on the rest. Never served.
   */
  salvaged?: ParsedPolicyFile;
  errors: PolicyError[];
  warnings: PolicyError[];
}

/** What one open of a policy file read: its bytes, and which file they came from. */
export interface PolicyFileRead {
  bytes: Buffer;
  /**
   * The file's identity, `dev:ino` of the descriptor the bytes were read from: what "already
   * loaded" and include cycles are decided by. A name resolved in a separate step (`realpath`
   * before or after the read) may name another file by then, if a link or a rename changed
   * between the two.
   */
  id: string;
  /**
   * Where the opened file is, as the kernel names the descriptor (`/proc/self/fd`): the file's
   * canonical path when it was read, or the name given when the kernel cannot say (the file was
   * removed meanwhile). For messages, and for the directory an included file's relative paths
   * are taken from (docs/policy.md rule 1).
   */
  real: string;
}

/** Read-only filesystem access the engine uses; tests may hand in their own. */
export interface FsView {
  stat(path: string): Promise<import('node:fs').Stats>;
  lstat(path: string): Promise<import('node:fs').Stats>;
  readdir(path: string): Promise<import('node:fs').Dirent[]>;
  realpath(path: string): Promise<string>;
  /** A policy file's bytes and identity, from one open (the real filesystem's: `openPolicyFile`). */
  readFile(path: string): Promise<PolicyFileRead>;
  access(path: string, mode: number): Promise<void>;
  readlink?(path: string): Promise<string>;
}

/** Everything the engine would otherwise read from the process: it reads none of it itself. */
export interface PolicyContext {
  home: string;
  env: Record<string, string | undefined>;
  /** Milliseconds since the epoch. */
  now: number;
  fs: FsView;
  /** mcp-roots' state directory (holds grants.yaml): protected. */
  stateDir?: string;
  /** mcp-roots' runtime directory (holds the socket): protected. */
  runtimeDir?: string;
  /** This installation of mcp-roots: protected. */
  installDir?: string;
}

/** What the daemon must watch so that it sees every change that could alter a list. */
export interface WatchPlan {
  /** Policy files (main, included, grants) and the files include globs could match: watch their directories. */
  policyFiles: string[];
  /** Directories whose include globs could gain a file: watch shallowly. */
  includeDirs: string[];
  /**
   * Directories to watch non-recursively, to `depth` levels below (0 = its own entries). With
   * `globs` (relative to `path`), only the directories below that some glob could enter are
   * watched (`entersBelow`): `/tmp/p*\/src/*` must not watch every directory of `/tmp` three
   * levels down. Without, every directory to that depth is.
   */
  dirs: { path: string; depth: number; globs?: string[] }[];
  /** Directories to watch recursively (globs with `**`). */
  recursive: { path: string; ignore: string[] }[];
}

/**
 * What a load found at one include pattern with glob characters: a file or link of that very
 * name (`literal`: the include names it, and it is read as such), or else the glob's matches, in
 * the order they load, with the links out of its directory it skipped and where its directory
 * really was (undefined: missing). A load now would do the same if all of these are the same.
 */
export interface GlobLook {
  pattern: string;
  literal: boolean;
  /** The static directory the matches live under (`/etc/mcp/*.yaml` → `/etc/mcp`). */
  base: string;
  baseReal: string | undefined;
  /** The directory lies behind a symlink loop (ELOOP): said, unlike a directory not made yet. */
  baseLoop: boolean;
  matches: string[];
  outsideBase: string[];
}

/** The result of loading the policy files (main and includes, or the grants file). */
export interface LoadedSources {
  files: ParsedPolicyFile[];
  errors: PolicyError[];
  warnings: PolicyError[];
  /** Every include pattern, absolute, for protected paths and the watch plan. */
  includePatterns: string[];
  /**
   * Each include glob the load looked at, as it found it (`GlobLook`: the files it matched, read
   * or not: past the caps they are not). With the files it read and `located`, all a load's
   * outcome depends on.
   */
  globbed: GlobLook[];
  /**
   * Paths the load went by without reading them: an include (or the grants file) refused as one
   * of the daemon's own state files (policies/own-state.ts), with where it led then
   * (`whereNow`: its canonical path and identity).
   */
  located: { path: string; where: string }[];
  /** True when the main file does not exist (a decision: no roots at all). */
  missingMain: boolean;
  /**
   * Files the schema refused, as far as it accepted them (`ParseResult.salvaged`): loaded like the
   * others (their paths expanded, their includes followed) so that their later errors and
   * warnings show with the schema's, but never part of what is served.
   */
  salvaged: ParsedPolicyFile[];
}

/** A resolved policy: an immutable snapshot computed at one instant. */
export interface ResolvedPolicy {
  readonly files: string[];
  readonly warnings: PolicyError[];
  /** The earliest future `expires` of any entry, or undefined. */
  readonly nextExpiry: number | undefined;
  readonly watchPlan: WatchPlan;
  /** Literal server names the policy mentions (patterns without `*`). */
  serverNames(): string[];
  /** The server's roots, sorted; pure, no filesystem access. */
  roots(server: string): Root[];
  /**
   * Work out these servers' lists ahead, yielding to the event loop between slices (`roots`
   * then answers at once); the result is the same as `roots` working them out when asked.
   */
  prepare(servers: Iterable<string>): Promise<void>;
  /** The earliest future expiry among the server's active entries. */
  nextExpiryOf(server: string): number | undefined;
  /**
   * How the server's list differs from the same server's list in the resolution this one was
   * updated from (the URIs added and removed), when that is known without comparing the lists.
   */
  rootsChange?(server: string): { from: Root[]; added: string[]; removed: string[] } | undefined;
  /** The access decision for a path (resolves symlinks). */
  check(server: string, path: string, access: 'read' | 'write'): Promise<CheckResult>;
  explain(server: string): ExplainResult;
  /** The strongest deny (or protected path) covering a canonical path for a server, if any. */
  denyFor(
    server: string,
    canonical: string,
  ): { access: 'all' | 'write'; reason: string } | undefined;
  tools(server: string): Record<string, ToolRule>;
  /** The server's `launch` and `sandbox` (paths expanded), as `policy/explain` gives them. */
  launch(server: string): Pick<ExplainResult, 'launch' | 'sandbox' | 'deny'>;
  /** The server's `ask:`, as `policy/explain` gives it. */
  ask(server: string): AskRule;
  /** What other entries let other servers write, as `policy/explain` gives it (`writers: true`). */
  writers(server: string): Writer[];
}
