/**
 * Git directories that are not named `.git`. Git takes any directory for a git directory when it
 * holds `HEAD` and `objects`, `refs` or `commondir` (its discovery of bare repositories, which
 * runs from every directory unless `safe.bareRepository` is `explicit`), and then runs what that
 * directory's `config` (`core.fsmonitor`), `config.worktree`, `hooks` or `commondir` says on a
 * routine `git status` run anywhere below it. The protected `**\/.git/...` patterns cover the
 * repository's own; this covers a git directory an agent assembles anywhere else, whatever the
 * order of its writes: the write that would leave a directory with both halves is refused.
 */
import { sep } from 'node:path';
import {
  GIT_DIR_CODE as CODE,
  GIT_DIR_NAMED,
  GIT_DIR_SHAPE as SHAPE,
  isGitCodeName,
  isGitDirShape as shaped,
} from '../common/protected-patterns.js';
import { pathProbe } from './fs.js';
import type { FsView } from './model.js';

const NAMES: ReadonlySet<string> = new Set<string>([...SHAPE, ...CODE]);

/**
 * Why writing `canonical` (a canonical path, or one whose missing tail is as written) would put
 * code where git runs it from a git directory, or undefined. Only an ancestor whose entry on the
 * way is one of the names above is looked at (a few `lstat`s); a path with none costs nothing.
 */
export async function gitDirWrite(fs: FsView, canonical: string): Promise<string | undefined> {
  if (!GIT_DIR_NAMED.test(canonical)) return undefined;
  const segments = canonical.split(sep);
  for (let i = segments.length - 1; i >= 1; i--) {
    const name = segments[i]!;
    if (!NAMES.has(name)) continue;
    const dir = segments.slice(0, i).join(sep) || sep;
    const before = await namesIn(fs, dir);
    const after = new Set(before).add(name);
    if (isGitCodeName(name) && shaped(after)) {
      return `${dir} is a git directory to git (it holds HEAD and objects, refs or commondir), and git runs what its ${name} says on a routine git status there`;
    }
    if (!shaped(before) && shaped(after) && CODE.some((c) => after.has(c))) {
      return `writing ${name} would make ${dir} a git directory to git, holding ${CODE.filter((c) => after.has(c)).join(' and ')}, which git runs on a routine git status there`;
    }
  }
  return undefined;
}

/** Which of the names above `dir` holds now (as any kind of entry, a link too). */
async function namesIn(fs: FsView, dir: string): Promise<Set<string>> {
  const probe = pathProbe(fs);
  const found = await Promise.all(
    [...NAMES].map(async (n) =>
      (await probe.lstat(dir === sep ? sep + n : dir + sep + n)) === undefined ? undefined : n,
    ),
  );
  return new Set(found.filter((n): n is string => n !== undefined));
}
