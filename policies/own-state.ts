/**
 * The daemon's own state files (its decision log, the lockdown mark, the socket pointer, the
 * link pins, temporary files): written as the daemon runs, so a policy may never be read from
 * one. A refused load is itself logged; a policy that read the log would change with each refusal
 * and be loaded again and again. Only the grants file of the state directory is policy.
 */
import { join, sep } from 'node:path';
import { grantsFile } from '../common/locations.js';
import type { FsView, PolicyContext } from './model.js';

export interface OwnState {
  /** The state directory, canonical. */
  dir: string;
  /** Its grants file, by its canonical name. */
  grants: string;
  /** `dev:ino` of every file in it but the grants file: a hard link elsewhere is still one. */
  ids: Set<string>;
}

/** Where a name leads: the file's canonical path and identity (`PolicyFileRead`'s `real`, `id`). */
export interface FileWhere {
  real: string;
  id: string;
}

/** The context's state directory as it is now, or undefined when the context names none. */
export async function ownState(ctx: PolicyContext): Promise<OwnState | undefined> {
  if (ctx.stateDir === undefined) return undefined;
  const dir = await ctx.fs.realpath(ctx.stateDir).catch(() => ctx.stateDir!);
  const grants = grantsFile(dir);
  const ids = new Set<string>();
  const entries = await ctx.fs.readdir(dir).catch(() => []);
  for (const e of entries) {
    const path = join(dir, e.name);
    if (path === grants) continue;
    const st = await ctx.fs.lstat(path).catch(() => undefined);
    if (st?.isFile()) ids.add(`${st.dev}:${st.ino}`);
  }
  return { dir, grants, ids };
}

/** Where `path` leads now, or undefined when it leads nowhere. */
export async function fileWhere(fs: FsView, path: string): Promise<FileWhere | undefined> {
  try {
    const [real, st] = await Promise.all([fs.realpath(path), fs.stat(path)]);
    return { real, id: `${st.dev}:${st.ino}` };
  } catch {
    return undefined;
  }
}

/** `where` as one string, as a load notes it (`LoadedSources.located`). */
export function whereKey(where: FileWhere): string {
  return `${where.real}#${where.id}`;
}

/** Where `path` leads now, as `whereKey` puts it, to compare with what a load noted. */
export async function whereNow(fs: FsView, path: string): Promise<string | undefined> {
  const where = await fileWhere(fs, path);
  return where && whereKey(where);
}

/**
 * Whether a file is one of the daemon's own: in the state directory (but the grants file), or a
 * hard link of one of its files (the grants file named by another file's link is that file).
 */
export function isOwnStateFile(own: OwnState, where: FileWhere): boolean {
  const inside = where.real.startsWith(own.dir === sep ? sep : own.dir + sep);
  return (inside && where.real !== own.grants) || own.ids.has(where.id);
}

/** Why `file` (an include, or the grants file) is not loaded. */
export function ownStateMessage(file: string, dir: string): string {
  return (
    `${file} is one of the daemon's own state files in ${dir} (its decision log, the lockdown ` +
    'mark, the socket pointer, the link pins), or a link to one, which the daemon writes itself: a policy ' +
    'cannot be read from them (of the files there, only the grants file is policy): keep ' +
    'policy files elsewhere'
  );
}
