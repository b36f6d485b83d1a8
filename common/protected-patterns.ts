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
 * A repository's git hooks and configuration: hooks, `core.fsmonitor` and `core.hooksPath` run
 * code on `git status` and `git commit`. Two segments: only a directory named `.git` itself
 * depends on its place (it cannot be created or moved whole).
 */
export const GIT_PATTERNS = ['**/.git/hooks', '**/.git/config'] as const;

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
