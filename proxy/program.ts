/**
 * The files a server's command runs from, so that the sandbox can show them read-only: the
 * executable found on PATH, the interpreter of a `#!` script, a Node script and its package with
 * the `node_modules` it loads from, a Node installation outside the system, and a Python's
 * virtual environment or installation outside the system (program-python.ts). (npx is resolved
 * to what npx would run before this, in npx.ts.)
 */
import { constants } from 'node:fs';
import { access, open, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { existsSync, lstatSync } from 'node:fs';
import { findOnPath } from '../common/find-on-path.js';
import { isInsideOrEqual } from '../common/segments.js';
import { anyoneWrites, tooWideForProgram } from './program-bounds.js';
import { real, writtenBy } from './written-by.js';
import { SYSTEM_PATHS } from './sandbox.js';
import { isRealDir, pythonDirs } from './program-python.js';

/** Where to look things up. */
export interface ProgramContext {
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  home: string;
  /** Told of what the server may need and is not shown (the proxy's log warns of it). */
  leftOut?: (message: string) => void;
  /** Canonical paths the server may write (sandbox-mounts.ts serverWritable). */
  serverOwn?: readonly string[];
  /**
   * Told of each file of the program as the command line names it (before links are followed):
   * the sandbox runs it by that name, so a link on the way is followed again at the start.
   */
  given?: (path: string) => void;
  /** Told of every path of the program, before those inside another are dropped. */
  every?: (paths: readonly string[]) => void;
}

/** The interpreter line of a script (`#!/usr/bin/env node` gives ['/usr/bin/env', 'node']). */
async function shebang(file: string): Promise<string[] | undefined> {
  let fh;
  try {
    // Not blocking, and a regular file only: a FIFO named as the script (one a server could make
    // where it writes) held the start until someone wrote to it.
    fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
    if (!(await fh.stat()).isFile()) return undefined;
    const buf = Buffer.alloc(256);
    const { bytesRead } = await fh.read(buf, 0, 256, 0);
    const text = buf.subarray(0, bytesRead).toString('utf8');
    if (!text.startsWith('#!')) return undefined;
    const words = text.slice(2).split('\n')[0]!.trim().split(/\s+/);
    return words[0] === '' ? undefined : words;
  } catch {
    return undefined;
  } finally {
    await fh?.close();
  }
}

const isNode = (file: string): boolean => /^node(js)?$/.test(basename(file));

/** Whether `p` is a regular file this process may execute: what the kernel runs from a `#!` line. */
async function isExecutableFile(p: string): Promise<boolean> {
  try {
    await access(p, constants.X_OK);
    return (await stat(p)).isFile();
  } catch {
    return false;
  }
}

/** Node options whose next argument is a module to load (so not the script). */
const NODE_OPTS_WITH_VALUE = new Set(['-r', '--require', '--import', '--loader', '-e', '--eval']);

/** A link, not what it leads to. */
function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

/** `node_modules/NAME` or `node_modules/@scope/NAME`: a package as npm installs one. */
function isInstalledPackage(d: string): boolean {
  const up = basename(dirname(d));
  return (
    up === 'node_modules' ||
    (up.startsWith('@') && basename(dirname(dirname(d))) === 'node_modules')
  );
}

/**
 * The directories a script needs: its package and every `node_modules` it may resolve from. A
 * `node_modules` that is a link is not followed (below); it is told of, since a server that cannot
 * find its packages in the sandbox otherwise exits with no word of why.
 */
function packageDirs(file: string, ctx: ProgramContext): string[] {
  const out: string[] = [];
  let pkgRoot: string | undefined;
  // The package is looked for no higher than the package in node_modules the file lies in, nor
  // than a place the server may write that holds it: a `package.json` above would show a whole
  // directory (a home, a project) for a file the server left at the top of its root.
  const own = ctx.serverOwn?.find((o) => isInsideOrEqual(file, o));
  let sealed = false;
  for (let d = dirname(file); ; d = dirname(d)) {
    if (anyoneWrites(d)) break;
    const modules = join(d, 'node_modules');
    if (isLink(modules) && !tooWideForProgram(d, ctx)) {
      ctx.leftOut?.(
        `${modules} is a link, and the sandbox does not follow a link on the way to a server's ` +
          'packages (a server that may write there could make one lead anywhere): if the server ' +
          'cannot find its packages, make it a directory (npm install there), or start a script ' +
          'that sits beside its own node_modules',
      );
    }
    if (basename(d) === 'node_modules') out.push(d);
    else if (
      pkgRoot === undefined &&
      !sealed &&
      (own === undefined || isInsideOrEqual(d, own)) &&
      existsSync(join(d, 'package.json')) &&
      !tooWideForProgram(d, ctx)
    ) {
      pkgRoot = d;
      // Node resolves from each ancestor's node_modules; the package's own is inside it. Only a
      // real directory: above the package, in a writable root, a server can make a link there,
      // and bubblewrap would show where it leads (test/hardening/sandbox-program-links.test.ts).
    } else if (isRealDir(join(d, 'node_modules')) && !tooWideForProgram(d, ctx)) {
      out.push(join(d, 'node_modules'));
    }
    if (isInstalledPackage(d)) sealed = true;
    if (dirname(d) === d) break;
  }
  out.push(pkgRoot ?? file);
  return out;
}

/** The paths the command runs from (canonical, existing; duplicates and nested ones removed). */
export async function programPaths(
  command: string,
  args: readonly string[],
  ctx: ProgramContext,
): Promise<string[]> {
  const out: string[] = [];
  /**
   * `run`: the kernel runs `p` (the command, or an interpreter a `#!` line names), so its own
   * `#!` line names what runs it; a script node loads has its `#!` line skipped by node, and what
   * it names is not shown: a file a server can write must not choose what the sandbox shows.
   */
  const addFile = async (p: string | undefined, depth: number, run: boolean): Promise<void> => {
    if (p === undefined || depth > 3) return;
    ctx.given?.(p);
    const r = await real(p);
    if (r === undefined) return;
    // What the kernel runs (the command, an interpreter) is an executable file, not a directory
    // or a secret.
    if (run && !(await isExecutableFile(r))) return;
    out.push(r);
    // A file the server may have left where it writes (there, or a link there to elsewhere)
    // chooses nothing the sandbox shows: not a Node "prefix" (whatever lies above it), not what
    // its `#!` line names (any file or project of the user's). It is shown itself, and what it
    // needs from outside must be given by sandbox.read.
    const planted = (await writtenBy(p, ctx.serverOwn)) !== undefined;
    if (!planted) out.push(...pythonDirs(p, r, ctx));
    if (isNode(r)) {
      // A Node outside the system (nvm, volta, a tarball): its prefix's `lib/node_modules` holds
      // its npm and global packages, and that is all it needs of it. Never the prefix itself:
      // a Node unpacked into ~/.local showed the whole of it, the daemon's state, keyrings and
      // the daemon's socket with it (an attacker pass).
      // A system Node's prefix (`/usr`) is shown whole anyway, and judged as a system directory.
      const prefix = dirname(dirname(r));
      const modules = SYSTEM_PATHS.some(([s]) => isInsideOrEqual(prefix, s))
        ? prefix
        : join(prefix, 'lib', 'node_modules');
      if (!planted && isRealDir(modules) && !tooWideForProgram(modules, ctx)) out.push(modules);
      return;
    }
    const line = await shebang(r);
    if (line !== undefined && run && !planted) {
      const [interp, ...rest] = line;
      const viaEnv = basename(interp!) === 'env' ? rest.find((w) => !w.startsWith('-')) : undefined;
      const found = viaEnv === undefined ? interp : await findOnPath(viaEnv, ctx.env, ctx.cwd);
      await addFile(found, depth + 1, true);
    }
    // Nor does a file it left choose a package to show: a link there to any script elsewhere
    // would show that script's whole project (an attacker pass).
    if (planted) return;
    if (/\.(c|m)?js$/.test(r) || line !== undefined) out.push(...packageDirs(r, ctx));
  };

  const found = await findOnPath(command, ctx.env, ctx.cwd);
  await addFile(found, 0, true);
  const resolved = found === undefined ? undefined : await real(found);
  if (resolved !== undefined && isNode(resolved)) {
    // `node [options] script args`: the script and what the options load.
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      if (NODE_OPTS_WITH_VALUE.has(a)) {
        const v = args[++i];
        if (v !== undefined && (isAbsolute(v) || v.startsWith('.'))) {
          await addFile(resolve(ctx.cwd, v), 1, false);
        }
        continue;
      }
      if (a.startsWith('-')) continue;
      await addFile(resolve(ctx.cwd, a), 1, false);
      break;
    }
  }
  ctx.every?.(out);
  return minimal(out);
}

/** Sorted, without duplicates and without paths inside another one of the list. */
export function minimal(paths: readonly string[]): string[] {
  const sorted = [...new Set(paths)].sort();
  const out: string[] = [];
  for (const p of sorted) {
    const last = out[out.length - 1];
    if (last !== undefined && (p === last || p.startsWith(last === sep ? sep : last + sep))) {
      continue;
    }
    out.push(p);
  }
  return out;
}
