/**
 * The protected paths written as `**\/NAME`: a host's configuration inside any project, and a
 * repository's git hooks and configuration (docs/security.md, "Protected paths: the rule"). The
 * daemon compiles them as write denies (policies/protected.ts) but does not name them in each
 * root's `_meta` (every root of every server would carry the whole list), so the sandbox, which
 * lays out what `_meta` names, takes them from here (proxy/sandbox-mounts.ts).
 */
import type { DenyMeta } from './types.js';

/**
 * Host configuration inside any project. Each is one segment after `**`, so that moving a project
 * never depends on these (docs/policy.md, "Moves").
 */
export const HOST_CONFIG_PATTERNS = [
  '**/.vscode',
  '**/.cursor',
  '**/.claude',
  '**/.gemini',
  '**/.codex',
  '**/.zed',
  '**/.continue',
  '**/.windsurf',
  '**/.kiro',
  '**/.roo',
  '**/.mcp.json',
] as const;

/**
 * What git reads from a git directory to run code on `git status` and `git commit`: its hooks,
 * its configuration (`core.fsmonitor`, `core.hooksPath`), a worktree's own configuration, and
 * `commondir`, which sends git to another directory for all of these. In the repository's
 * `.git`, in each submodule's git directory below `.git/modules/` (a name may hold slashes,
 * and submodules nest) and in each linked worktree's below `.git/worktrees/`.
 */
export const GIT_PATTERNS = [
  '**/.git/hooks',
  '**/.git/config',
  '**/.git/config.worktree',
  '**/.git/commondir',
  '**/.git/modules/**/hooks',
  '**/.git/modules/**/config',
  '**/.git/modules/**/config.worktree',
  '**/.git/modules/**/commondir',
  '**/.git/worktrees/*/config.worktree',
  '**/.git/worktrees/*/commondir',
] as const;

/**
 * A git directory anywhere, by its entries (policies/git-dir.ts): git takes a directory holding
 * `HEAD` and one of `objects`, `refs` or `commondir` for one, and runs what its `config`,
 * `config.worktree`, `hooks` or `commondir` says.
 */
export const GIT_DIR_SHAPE = ['HEAD', 'objects', 'refs', 'commondir'] as const;
export const GIT_DIR_CODE = ['config', 'config.worktree', 'hooks', 'commondir'] as const;

/** Whether a directory holding these names is a git directory to git (`GIT_DIR_SHAPE`). */
export function isGitDirShape(names: ReadonlySet<string>): boolean {
  return names.has('HEAD') && (names.has('objects') || names.has('refs') || names.has('commondir'));
}

/** Whether `name` is one of the entries of a git directory that git runs code from. */
export const isGitCodeName = (name: string): boolean =>
  (GIT_DIR_CODE as readonly string[]).includes(name);

/** A path with one of those names as a segment (the only paths a git directory's check reads). */
export const GIT_DIR_NAMED = new RegExp(
  `(?:^|/)(?:${[...new Set([...GIT_DIR_SHAPE, ...GIT_DIR_CODE])]
    .map((n) => n.replace('.', '\\.'))
    .join('|')})(?:/|$)`,
);

/**
 * A `.git` itself: as a file (a submodule's or a linked worktree's checkout) it names the git
 * directory git reads all of the above from, so writing one anywhere would point git at a
 * directory the agent made. Only the name itself is protected (`entriesOnly`), not a `.git`
 * directory's contents; the sandbox makes such a file read-only and leaves a directory as it is.
 */
export const GIT_POINTER = '**/.git';

/** Every built-in `**\/NAME` protected path as a write deny, as `_meta['mcp-roots/deny']` would name it. */
export const BUILT_IN_WRITE_DENIES: readonly DenyMeta[] = [
  ...HOST_CONFIG_PATTERNS,
  ...GIT_PATTERNS,
].map((pattern) => ({ pattern, access: 'write' as const }));

/**
 * `denies` with every built-in `**\/NAME` protected path added as a write deny (once: a policy
 * that names one itself keeps its own, whose access may be `all`).
 */
export function withBuiltInProtected(denies: readonly DenyMeta[]): DenyMeta[] {
  const named = new Set(denies.flatMap((d) => ('pattern' in d ? [d.pattern] : [])));
  return [
    ...denies,
    ...BUILT_IN_WRITE_DENIES.filter((d) => !named.has((d as { pattern: string }).pattern)),
  ];
}
