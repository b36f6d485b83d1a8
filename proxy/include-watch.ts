/**
 * Watching the include bases a sandboxed server's writable roots and extra writable paths
 * (`sandbox.write`) hold (sandbox-includes.ts). The
 * layout mounts an existing base read-only and refuses to start while one is missing; both hold
 * only for what stood at that name when the sandbox was laid out. The person may remove or move a
 * base (or a directory above it, inside the root) while the server runs: the kernel then detaches
 * the read-only mount in the sandbox, and the server could make the name again and write a policy
 * file in it. Or the person makes a missing base (`mkdir -p`, as the refusal says), and the server
 * can now start. Either way what stands at a watched name changed: the server is stopped at once
 * and the layout is made again (which mounts the new base read-only, or refuses).
 *
 * One watch per parent directory on the way, inside the root, each for one name: a handful per
 * include pattern, not a walk of the root.
 */
import { lstatSync, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Root, SandboxRule } from '../common/types.js';
import { guardedWatch } from '../common/watch-flood.js';
import { canonicalLoose, splitInclude } from './sandbox-includes.js';
import { ancestors, inside } from './sandbox-paths.js';

/** What stands at a path: its device and inode, or nothing. */
const identity = (p: string): string => {
  const st = lstatSync(p, { throwIfNoEntry: false });
  return st === undefined ? 'missing' : `${st.dev}:${st.ino}:${st.isDirectory() ? 'd' : 'f'}`;
};

export interface IncludeWatchOptions {
  /** What stands at `path` (an include base, or a directory above one) changed. */
  onChanged(path: string): void;
}

export class IncludeWatch {
  private watchers: FSWatcher[] = [];
  private key = '';

  constructor(private readonly o: IncludeWatchOptions) {}

  /**
   * Watch the include bases of these roots (`_meta['mcp-roots/include']`) and of the sandbox's
   * extra writable paths (`sandbox.write`, with the policy's include patterns) from now on.
   */
  async update(roots: readonly Root[], sandbox?: SandboxRule): Promise<void> {
    const extra = sandbox?.include ?? [];
    const key = JSON.stringify([
      roots.map((r) => [r.uri, r._meta['mcp-roots/readOnly'], r._meta['mcp-roots/include'] ?? []]),
      extra.length === 0 ? [] : (sandbox?.write ?? []),
      extra,
    ]);
    if (key === this.key) return;
    this.key = key;
    const writable: { root: string; patterns: readonly string[] }[] = [];
    for (const r of roots) {
      const patterns = r._meta['mcp-roots/include'] ?? [];
      if (r._meta['mcp-roots/readOnly'] || patterns.length === 0) continue;
      writable.push({ root: fileURLToPath(r.uri), patterns });
    }
    if (extra.length > 0) {
      for (const w of sandbox?.write ?? []) {
        writable.push({ root: await canonicalLoose(w), patterns: extra });
      }
    }
    /** Per parent directory: the names watched there and what stood at each. */
    const wanted = new Map<string, Map<string, string>>();
    for (const { root, patterns } of writable) {
      for (const pattern of patterns) {
        const base = await canonicalLoose(splitInclude(pattern).base);
        if (base === root || !inside(base, root)) continue;
        for (const p of [base, ...ancestors(base)]) {
          if (p === root || !inside(p, root)) break;
          const names = wanted.get(dirname(p)) ?? new Map<string, string>();
          names.set(basename(p), identity(p));
          wanted.set(dirname(p), names);
        }
      }
    }
    const watchers: FSWatcher[] = [];
    for (const [dir, names] of wanted) {
      let w: FSWatcher;
      try {
        w = guardedWatch(
          dir,
          { persistent: false },
          (_event, name) => {
            if (typeof name !== 'string') return;
            const was = names.get(name);
            const path = `${dir === '/' ? '' : dir}/${name}`;
            if (was !== undefined && identity(path) !== was) {
              names.set(name, identity(path));
              this.o.onChanged(path);
            }
          },
          // Events behind a flood (common/watch-flood.ts) go unseen: the watch is closed and this
          // is a change, which stops the server; the next plan sets every watch afresh.
          () => this.lost(dir),
        );
      } catch {
        // Not there (yet): a directory above it is watched for its name, and reports it.
        continue;
      }
      // Node closes a watch that reports an error: as for a flood.
      w.on('error', () => this.lost(dir));
      watchers.push(w);
      // Changed while the watch was being set: report it now.
      for (const [name, was] of names) {
        const path = `${dir === '/' ? '' : dir}/${name}`;
        if (identity(path) !== was) this.o.onChanged(path);
      }
    }
    this.close();
    this.key = key;
    this.watchers = watchers;
  }

  /** The watch of `dir` is closed, and what changes there goes unseen: a change (above). */
  private lost(dir: string): void {
    this.key = '';
    this.o.onChanged(dir);
  }

  close(): void {
    this.key = '';
    for (const w of this.watchers) w.close();
    this.watchers = [];
  }
}
