/** Which directory watches a watch plan needs, each once, with what its events are for. */
import type { WatchPlan } from '../policies/index.js';
import type { DegradeCode, WatchHandle } from './watch-backend.js';
import { wayTo } from './watch-way.js';

/**
 * What a watch is for: policy files (reload on a real edit), root directories (resolve again),
 * the links on the way to a root's directory (resolve again when one of them changes), or the
 * directories above every watched one (watch-way.ts: one renamed moves the watches below).
 */
export type Role = 'policy' | 'roots' | 'links' | 'way';

/** One directory watch, kept by its key from one plan to the next. */
export interface Watch {
  key: string;
  path: string;
  /** Where `path` led when the plan was made: the directory the watch follows. */
  real: string;
  /** Levels below `path` (its own entries, or a tree to that depth), or 'recursive' (watch-tree.ts). */
  depth: number | 'recursive';
  /** For a depth-limited watch: the globs that decide which directories below are watched. */
  globs?: string[];
  ignore: string[];
  roles: Set<Role>;
  handle?: WatchHandle;
  degraded?: DegradeCode;
  /** How many times it was degraded: one while it opened means the new handle is dead already. */
  degradations?: number;
  removed?: boolean;
  /** Resolutions walking under it that set it first (watcher.ts `watchFirst`): kept until done. */
  held?: number;
  /** A watch of the way alone that could not be set (why): left unset, and not degraded. */
  skipped?: string;
}

/**
 * A directory the policy's files need watched, by the name the policy reaches it by, with where
 * that name led when the plan was made. A watch follows links once, when it is set: the key
 * holds the real directory, so that a link on the way re-pointed (an include glob's base, say)
 * gets a new watch of where it leads now at the next plan, not the old one kept.
 */
export interface PolicyDir {
  path: string;
  real?: string;
}

/**
 * The watches `plan` asks for (the roots' directories and trees, keyed with where each led when
 * `roots.located` knows it, and the directories holding links on the way to them) and those the
 * policy's files need (`policyDirs`, each watched shallowly; `includeTrees`, an include glob's
 * base as deep as its matches may lie), by key: a directory both need is one watch. Then every
 * directory above them: one already watched for its own entries takes that role on too.
 */
export function wantedWatches(
  plan: WatchPlan,
  policyDirs: PolicyDir[],
  includeTrees: (PolicyDir & { depth: Watch['depth'] })[] = [],
  roots: { located: Map<string, string | undefined>; linkDirs: PolicyDir[] } = {
    located: new Map(),
    linkDirs: [],
  },
): Map<string, Watch> {
  const wanted = new Map<string, Watch>();
  const want = (
    path: string,
    depth: Watch['depth'],
    ignore: string[],
    role: Role,
    globs?: string[],
    real?: string,
  ) => {
    const led = real === undefined || real === path ? '' : `\0real:${real}`;
    const key =
      depth === 'recursive'
        ? `r:${path}\0${ignore.join('\0')}${led}`
        : `d:${depth}:${path}${globs === undefined ? '' : `\0g:${globs.join('\0')}`}${led}`;
    let w = wanted.get(key);
    if (!w) {
      const at = real ?? path;
      w = { key, path, real: at, depth, ignore, roles: new Set(), ...(globs ? { globs } : {}) };
      wanted.set(key, w);
    }
    w.roles.add(role);
  };
  for (const d of plan.dirs) want(d.path, d.depth, [], 'roots', d.globs, roots.located.get(d.path));
  for (const r of plan.recursive)
    want(r.path, 'recursive', r.ignore, 'roots', undefined, roots.located.get(r.path));
  for (const d of roots.linkDirs) want(d.path, 0, [], 'links', undefined, d.real);
  for (const d of policyDirs) want(d.path, 0, [], 'policy', undefined, d.real);
  for (const t of includeTrees) want(t.path, t.depth, [], 'policy', undefined, t.real);

  const way = wayTo([...wanted.values()].map((w) => w.real));
  // A watch of a directory's own entries sees the renames a way watch is for.
  const shallow = new Map<string, Watch>();
  for (const w of wanted.values()) if (w.depth === 0) shallow.set(w.real, w);
  for (const dir of way.dirs) {
    const w = shallow.get(dir);
    if (w) w.roles.add('way');
    else want(dir, 0, [], 'way');
  }
  return wanted;
}
