/** The engine's window on the filesystem: read-only, and memoised within one resolution. */
import { promises as fsp } from 'node:fs';
import type { Dirent, Stats } from 'node:fs';
import type { FsView } from './model.js';

/** The real filesystem, read-only. */
export function nodeFs(): FsView {
  return {
    stat: (p) => fsp.stat(p),
    lstat: (p) => fsp.lstat(p),
    readdir: (p) => fsp.readdir(p, { withFileTypes: true }),
    realpath: (p) => fsp.realpath(p),
    readFile: (p) => fsp.readFile(p),
    access: (p, mode) => fsp.access(p, mode),
    readlink: (p) => fsp.readlink(p),
  };
}

/**
 * A view that asks the underlying one at most once per path and operation, so that a
 * thousand rules over one tree walk it once. Use a fresh one for each resolution.
 */
export function memoFs(inner: FsView): FsView {
  const stat = new Map<string, Promise<Stats>>();
  const lstat = new Map<string, Promise<Stats>>();
  const readdir = new Map<string, Promise<Dirent[]>>();
  const realpath = new Map<string, Promise<string>>();
  const access = new Map<string, Promise<void>>();
  function once<T>(map: Map<string, Promise<T>>, key: string, op: () => Promise<T>): Promise<T> {
    let p = map.get(key);
    if (!p) {
      p = op();
      // The cached promise may never be awaited by a later caller; mark it handled.
      p.catch(() => undefined);
      map.set(key, p);
    }
    return p;
  }
  const view: FsView = {
    stat: (p) => once(stat, p, () => inner.stat(p)),
    lstat: (p) => once(lstat, p, () => inner.lstat(p)),
    readdir: (p) => once(readdir, p, () => inner.readdir(p)),
    realpath: (p) => once(realpath, p, () => inner.realpath(p)),
    readFile: (p) => inner.readFile(p),
    access: (p, mode) => once(access, `${mode}:${p}`, () => inner.access(p, mode)),
  };
  if (inner.readlink) view.readlink = (p) => inner.readlink!(p);
  return view;
}
