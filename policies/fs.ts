/** The engine's window on the filesystem: read-only, and memoised within one resolution. */
import {
  accessSync,
  existsSync,
  lstatSync,
  promises as fsp,
  readdirSync,
  readlinkSync,
  realpathSync,
  statSync,
} from 'node:fs';
import type { Dirent, Stats } from 'node:fs';
import type { FsView, PolicyFileRead } from './model.js';
import { openPolicyFile, openPolicyFileSync } from './read-policy-file.js';

/**
 * Views that are the real filesystem underneath (nodeFs, and the limits and memos over it):
 * for these, `accessAll` may ask the kernel directly. A view a test builds, even one spread
 * from nodeFs, is not among them and is asked through its own `access`.
 */
const direct = new WeakSet<FsView>();

/** The real filesystem, read-only. */
export function nodeFs(): FsView {
  const view: FsView = {
    stat: (p) => fsp.stat(p),
    lstat: (p) => fsp.lstat(p),
    readdir: (p) => fsp.readdir(p, { withFileTypes: true }),
    realpath: (p) => fsp.realpath(p),
    readFile: (p) => openPolicyFile(p),
    access: (p, mode) => fsp.access(p, mode),
    readlink: (p) => fsp.readlink(p),
  };
  direct.add(view);
  return view;
}

/**
 * The real filesystem, read-only, answered by blocking calls: for a process that evaluates one
 * policy and exits with nothing else to do meanwhile (rootsctl's `validate` and `--config`), where
 * a promise through libuv's thread pool per call is only overhead, and loading `fs/promises` (it
 * brings `readline` and the directory and watch modules along) was about 8 M instructions of
 * `rootsctl validate`'s start (bench/FINDINGS.md). The same calls as `nodeFs` otherwise; not for
 * the daemon, whose event loop must not wait on a slow mount.
 */
export function nodeFsSync(): FsView {
  const sync =
    <A extends unknown[], R>(call: (...args: A) => R) =>
    (...args: A): Promise<R> => {
      // A promise that settles as the call did: an error thrown is its rejection.
      return new Promise<R>((resolve) => resolve(call(...args)));
    };
  const view: FsView = {
    stat: sync((p: string) => statSync(p)),
    lstat: sync((p: string) => lstatSync(p)),
    readdir: sync((p: string) => readdirSync(p, { withFileTypes: true })),
    realpath: sync((p: string) => realpathSync.native(p)),
    readFile: sync((p: string) => openPolicyFileSync(p)),
    access: sync((p: string, mode: number) => accessSync(p, mode)),
    readlink: sync((p: string) => readlinkSync(p)),
  };
  direct.add(view);
  return view;
}

/**
 * The calls that canonicalize a path (`canonicalizeLoose`), each answering `undefined` for a path
 * that does not exist (ENOENT, or ENOTDIR: a component is not a directory) and throwing any other
 * error. Answers may be plain values: on the real filesystem they are.
 */
export interface PathProbe {
  realpath(p: string): string | undefined | Promise<string | undefined>;
  lstat(p: string): Stats | undefined | Promise<Stats | undefined>;
  /** Absent when the view cannot read links (a test's own view). */
  readlink: ((p: string) => string | Promise<string>) | undefined;
}

function isMissing(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function missingAsUndefined(err: unknown): undefined {
  if (isMissing(err)) return undefined;
  throw err;
}

/**
 * The probe of the real filesystem: direct calls. One `realpath` is a few microseconds in the
 * kernel, and through libuv's thread pool (behind the resolution's cap on calls in flight)
 * several times that. Every resolution canonicalizes the 60-odd protected paths and every deny,
 * and every access decision its path, so this was most of a one-directory recompute (5 ms of
 * 5.5 here) and of a `roots/check`. As with `accessAll`, a hung network mount would hold the
 * event loop for the call that hangs. A missing path answers without an exception: the built-in
 * protected paths alone are 80-odd paths, most of them missing on any one machine, and an
 * `Error` with its stack per missing component was a visible share of `rootsctl validate`.
 */
const directProbe: PathProbe = {
  realpath(p) {
    if (!existsSync(p)) return undefined;
    try {
      return realpathSync.native(p);
    } catch (err) {
      return missingAsUndefined(err); // removed between the two calls
    }
  },
  lstat(p) {
    try {
      return lstatSync(p, { throwIfNoEntry: false });
    } catch (err) {
      return missingAsUndefined(err);
    }
  },
  readlink: (p) => readlinkSync(p),
};

/** Each view's probe, made once. */
const probes = new WeakMap<FsView, PathProbe>();

/** The calls `canonicalizeLoose` makes, for `fs`: direct ones on the real filesystem. */
export function pathProbe(fs: FsView): PathProbe {
  if (direct.has(fs)) return directProbe;
  let probe = probes.get(fs);
  if (probe === undefined) {
    const readlink = fs.readlink?.bind(fs);
    probe = {
      realpath: (p) => fs.realpath(p).catch(missingAsUndefined),
      lstat: (p) => fs.lstat(p).catch(missingAsUndefined),
      readlink,
    };
    probes.set(fs, probe);
  }
  return probe;
}

/** How many `access` calls run between two turns of the event loop (about a millisecond). */
const ACCESS_SLICE = 256;

/**
 * Whether each path passes `access(path, mode)`. A glob over 100,000 entries asks this of every
 * match: on the real filesystem the calls are made directly, a slice at a time with the event
 * loop turning between slices (a promise through the thread pool per path costs several times
 * the system call, and would queue every check's own calls behind the walk's).
 */
export async function accessAll(fs: FsView, paths: string[], mode: number): Promise<boolean[]> {
  if (!direct.has(fs)) {
    return Promise.all(
      paths.map((p) =>
        fs.access(p, mode).then(
          () => true,
          () => false,
        ),
      ),
    );
  }
  const out: boolean[] = new Array<boolean>(paths.length);
  for (let i = 0; i < paths.length; i++) {
    if (i > 0 && i % ACCESS_SLICE === 0) await new Promise((r) => setImmediate(r));
    try {
      accessSync(paths[i]!, mode);
      out[i] = true;
    } catch {
      out[i] = false;
    }
  }
  return out;
}

/**
 * How many filesystem calls one resolution keeps in flight. libuv runs them on a pool of four
 * threads shared with every access decision: a walk of thousands of directories queued at once
 * would put each check's own `realpath` behind all of them. A few more than the pool keeps the
 * pool busy while a check waits behind at most this many calls.
 */
export const RESOLVE_IN_FLIGHT = 8;

/** A view that lets at most `max` calls run at once; the rest wait their turn, in order. */
export function limitFs(inner: FsView, max = RESOLVE_IN_FLIGHT): FsView {
  let running = 0;
  const waiting: (() => void)[] = [];
  // A finished call hands its slot straight to the next waiting one.
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };
  function limited<A extends unknown[], T>(op: (...args: A) => Promise<T>) {
    return async (...args: A): Promise<T> => {
      if (running >= max) await new Promise<void>((resolve) => waiting.push(resolve));
      else running++;
      try {
        return await op(...args);
      } finally {
        release();
      }
    };
  }
  const view: FsView = {
    stat: limited((p: string) => inner.stat(p)),
    lstat: limited((p: string) => inner.lstat(p)),
    readdir: limited((p: string) => inner.readdir(p)),
    realpath: limited((p: string) => inner.realpath(p)),
    readFile: limited((p: string) => inner.readFile(p)),
    access: limited((p: string, mode: number) => inner.access(p, mode)),
  };
  if (inner.readlink) view.readlink = limited((p: string) => inner.readlink!(p));
  if (direct.has(inner)) direct.add(view);
  return view;
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
  if (direct.has(inner)) direct.add(view);
  return view;
}

/**
 * The real filesystem view `inner`, whose `readFile` answers each path in `reads` once with the
 * read given: the daemon has just read and compared these files' bytes to tell an edit from
 * noise, and the reload that follows loads those very bytes instead of reading them again. Any
 * other path, or a path asked again, is read from `inner`. A view that is not the real
 * filesystem (a test's own) is returned as it is: the reads were made on the real one.
 */
export function withReads(inner: FsView, reads: Map<string, PolicyFileRead>): FsView {
  if (!direct.has(inner) || reads.size === 0) return inner;
  const left = new Map(reads);
  const view: FsView = {
    ...inner,
    readFile: (p) => {
      const read = left.get(p);
      if (read === undefined) return inner.readFile(p);
      left.delete(p);
      return Promise.resolve(read);
    },
  };
  direct.add(view);
  return view;
}

/**
 * `inner`, telling `note` of every policy file it reads: the read, or the error that refused it.
 * The daemon keeps what each load read, so that an event can be told from an edit by comparing
 * the files on disk with what the policy in force was loaded from (daemon/policy-edits.ts).
 * A path read again (a file included twice) is answered with its first read: one load sees one
 * version of each file, the version noted, even if the file changes while the load reads.
 */
export function noteReads(
  inner: FsView,
  note: (path: string, outcome: { read: PolicyFileRead } | { error: unknown }) => void,
): FsView {
  const first = new Map<string, Promise<PolicyFileRead>>();
  const readOnce = async (p: string): Promise<PolicyFileRead> => {
    try {
      const read = await inner.readFile(p);
      note(p, { read });
      return read;
    } catch (error) {
      note(p, { error });
      throw error;
    }
  };
  const view: FsView = {
    ...inner,
    readFile: (p) => {
      let read = first.get(p);
      if (read === undefined) {
        read = readOnce(p);
        first.set(p, read);
      }
      return read;
    },
  };
  if (direct.has(inner)) direct.add(view);
  return view;
}
