/**
 * A watch failing as libuv fails one: Node closes the `fs.watch` handle and emits `error` on
 * it. The OS does not produce that on demand, so `fs.watch` is wrapped (for the ES module
 * bindings too) to keep the watches it makes, and `fail` drives a kept one's own error path.
 * The same wrapping lands a change in the moment a watch is being set (`wrapWatch`).
 */
import type { FSWatcher } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { constants } from 'node:os';
import type { Test } from 'tap';
import { repoPath } from './repo.js';

/** Node's handle behind an `fs.watch`; `onchange` with a negative status is its error path. */
interface Handle {
  onchange(status: number, event: string, name: string | null): void;
}

/** The CommonJS `fs`, whose properties the ES module bindings are synced from. */
const fs = createRequire(repoPath('package.json'))('node:fs') as typeof import('node:fs');

/**
 * `fs.watch` wrapped until `t` ends: `before` runs just before each call with its path (to land
 * a change in the moment a watch is being set), `after` with the watch made.
 */
export function wrapWatch(
  t: Test,
  hooks: { before?: (path: string) => void; after?: (path: string, w: FSWatcher) => void },
): void {
  const original = fs.watch;
  const wrapped = (...args: unknown[]) => {
    hooks.before?.(String(args[0]));
    const w = (original as (...a: unknown[]) => FSWatcher)(...args);
    hooks.after?.(String(args[0]), w);
    return w;
  };
  fs.watch = wrapped;
  syncBuiltinESMExports();
  t.teardown(() => {
    fs.watch = original;
    syncBuiltinESMExports();
  });
}

export function watchFaults(t: Test) {
  const made: { path: string; w: FSWatcher }[] = [];
  wrapWatch(t, { after: (path, w) => made.push({ path, w }) });
  /** Fail every open watch of `path` with EIO; how many there were. */
  const fail = (path: string): number => {
    let n = 0;
    for (const { w } of made.filter((m) => m.path === path)) {
      const handle = (w as unknown as { _handle: Handle | null })._handle;
      if (handle === null) continue; // closed
      if (typeof handle?.onchange !== 'function') throw new Error('fs.watch has no handle here');
      handle.onchange(-constants.errno.EIO, 'rename', null);
      n++;
    }
    return n;
  };
  /** How many watches of `path` were made. */
  const count = (path: string): number => made.filter((m) => m.path === path).length;
  return { fail, made: count };
}
