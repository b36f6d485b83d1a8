/**
 * The filesystem calls a client makes to find the daemon safely (the socket directory's check,
 * the daemon's pointer): asynchronous, or blocking for a one-shot command. The checks themselves
 * are written once (socket-path.ts, socket-pointer.ts) and take either.
 */
import { lstatSync, promises as fsp, readFileSync, type Stats } from 'node:fs';

/** `lstat` and a file's text, rejecting as `fs.promises` does (ENOENT for a missing path). */
export interface SocketLookups {
  lstat(path: string): Promise<Stats>;
  readFile(path: string): Promise<string>;
}

/**
 * Through libuv's thread pool: for a long-lived process (the proxy, a program using the library),
 * whose event loop must not wait on a slow mount. `fs.promises` is reached only at the first call.
 */
export const asyncLookups: SocketLookups = {
  lstat: (path) => fsp.lstat(path),
  readFile: (path) => fsp.readFile(path, 'utf8'),
};

/** A promise that settles as `call` did: what it throws is the rejection. */
function settled<T>(call: () => T): Promise<T> {
  return new Promise<T>((resolve) => resolve(call()));
}

/**
 * Blocking calls, answered as settled promises: for a command that connects, asks once and exits
 * with nothing else to do meanwhile (rootsctl's `status`, `list`, ...). A round through the thread
 * pool per call is only overhead there, and `fs/promises` (with the readline, directory and
 * watch modules it loads) cost about 6 M instructions of every such start (bench/FINDINGS.md).
 */
export const blockingLookups: SocketLookups = {
  lstat: (path) => settled(() => lstatSync(path)),
  readFile: (path) => settled(() => readFileSync(path, 'utf8')),
};
