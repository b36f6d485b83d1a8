/**
 * The symlinks met on the way to a path, resolving one link at a time as the kernel does: a link's
 * target is walked in turn, so a link that leads to another is followed through it. Each is named
 * where it lies (its canonical directory and its name). The daemon and the sandbox use it for an
 * include pattern's base: a link there that a server may replace moves what the daemon includes
 * (policies/include-meta.ts, proxy/sandbox-includes.ts), and the sandbox for its `read` and
 * `write` paths (proxy/sandbox-mounts.ts).
 */
import { dirname, join } from 'node:path';

/** What the walk reads. */
export interface LinkFs {
  lstat(path: string): Promise<{ isSymbolicLink(): boolean }>;
  readlink(path: string): Promise<string>;
}

/** How many links a walk follows, as the kernel's ELOOP (40): past it nothing is followed either. */
const MAX_LINKS = 40;

/**
 * The links on the way to the absolute `path`, in the order met. The walk stops at a missing or
 * unreadable component (nothing beyond it can be a link yet) and after `MAX_LINKS` links.
 */
export async function linksOnTheWay(path: string, fs: LinkFs): Promise<string[]> {
  const links: string[] = [];
  const todo = path.split('/').filter((s) => s !== '');
  let at = '/';
  while (todo.length > 0) {
    const name = todo.shift()!;
    if (name === '.') continue;
    if (name === '..') {
      at = dirname(at);
      continue;
    }
    const next = join(at, name);
    try {
      if (!(await fs.lstat(next)).isSymbolicLink()) {
        at = next;
        continue;
      }
      links.push(next);
      if (links.length > MAX_LINKS) return links;
      const target = await fs.readlink(next);
      todo.unshift(...target.split('/').filter((s) => s !== ''));
      if (target.startsWith('/')) at = '/';
    } catch {
      return links;
    }
  }
  return links;
}
