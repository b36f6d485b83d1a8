/**
 * The peer of `resolve.ts`: the filesystem calls one resolution makes, recorded once and then
 * made again bare, with nothing built from their answers. The recording view is not the real
 * filesystem to the engine (it asks it through promises), so it sees every call; the replay
 * makes them the way the engine makes them on the real filesystem: `readdir` through libuv's
 * pool with the same cap on calls in flight, the rest (`realpath`, `lstat`, `access`, `stat`,
 * `readlink`) directly.
 */
import {
  accessSync,
  lstatSync,
  promises as fsp,
  readlinkSync,
  realpathSync,
  statSync,
} from 'node:fs';
import type { FsView } from '../policies/index.js';

export type Call = [
  op: 'readdir' | 'realpath' | 'lstat' | 'stat' | 'access' | 'readlink',
  path: string,
  mode?: number,
];

/** `inner`, noting each call in `calls`. */
export function recordingFs(inner: FsView, calls: Call[]): FsView {
  return {
    stat: (p) => (calls.push(['stat', p]), inner.stat(p)),
    lstat: (p) => (calls.push(['lstat', p]), inner.lstat(p)),
    readdir: (p) => (calls.push(['readdir', p]), inner.readdir(p)),
    realpath: (p) => (calls.push(['realpath', p]), inner.realpath(p)),
    readFile: (p) => inner.readFile(p),
    access: (p, mode) => (calls.push(['access', p, mode]), inner.access(p, mode)),
    readlink: (p) => (calls.push(['readlink', p]), inner.readlink!(p)),
  };
}

/** The engine's cap on calls in flight through the pool (policies/fs.ts RESOLVE_IN_FLIGHT). */
const IN_FLIGHT = 8;

/** Make `calls` again: `readdir`s `IN_FLIGHT` at a time, every other call directly. */
export async function replay(calls: Call[]): Promise<void> {
  const dirs: string[] = [];
  for (const [op, path, mode] of calls) {
    try {
      if (op === 'readdir') dirs.push(path);
      else if (op === 'realpath') realpathSync.native(path);
      else if (op === 'lstat') lstatSync(path);
      else if (op === 'stat') statSync(path);
      else if (op === 'readlink') readlinkSync(path);
      else accessSync(path, mode);
    } catch {
      // a missing path answers as the engine's call did
    }
  }
  let next = 0;
  const worker = async () => {
    while (next < dirs.length) {
      const dir = dirs[next++]!;
      await fsp.readdir(dir, { withFileTypes: true }).catch(() => undefined);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
}
