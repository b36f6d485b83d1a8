/**
 * A code entry (`config`, `config.worktree`, `hooks`, `commondir`) that appeared in a git
 * directory of a sandboxed server's writable roots and is the server's, not the person's
 * (git-notes.ts says which). The sandbox makes the ones that exist read-only at the start,
 * but it cannot mount over a name that does not exist without making it on the person's disk:
 * a server could write `.git/commondir` (or `hooks/`, or `config.worktree`) into a repository
 * whose own configuration it cannot touch, and the next `git status` outside the sandbox would
 * run what it says. A restart only makes such an entry read-only with what the server put in
 * it, so the proxy moves it aside, in the same directory, under a name git does not read, and
 * says where: the person gets it back with one `mv` if they made it themselves.
 */
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, renameSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * The name `name` is moved to: one git does not read, saying who moved it and when, with a
 * random part. A directory moved aside is still a repository git enters behind a gitlink that
 * names it, and a server staged gitlinks for every name a clock would give.
 */
const asideName = (name: Buffer, now: Date): Buffer =>
  Buffer.concat([
    name,
    Buffer.from(
      `.moved-by-mcp-roots-${now.toISOString().replace(/[:.]/g, '-')}-${randomBytes(6).toString('hex')}`,
    ),
  ]);

/**
 * The name a directory whose name is not UTF-8 is moved to: UTF-8, so that the watch walks it
 * as any directory that appeared and hands on the code of a git directory in it (in the
 * person's work tree), and random. Its old name is in the log, quoted for the shell.
 */
const unnamedAsideName = (name: Buffer): Buffer =>
  Buffer.from(
    `mcp-roots-moved-${createHash('sha256').update(name).digest('hex').slice(0, 12)}-${randomBytes(6).toString('hex')}`,
  );

/** `name` as a shell word that names those bytes: `$'…'` with octal escapes. */
const shellBytes = (name: Buffer): string =>
  `$'${[...name].map((b) => (b >= 0x20 && b < 0x7f && b !== 0x27 && b !== 0x5c ? String.fromCharCode(b) : `\\${b.toString(8).padStart(3, '0')}`)).join('')}'`;

/**
 * Move `path` aside within its directory, provided that directory is still the one the watch
 * read (`dirIdentity`, device and inode), and return what the log should say. The rename goes
 * through the directory's descriptor (`/proc/self/fd/N/…`), so a directory on the way that was
 * swapped for a link since cannot send it anywhere else.
 */
export function setAsidePlanted(path: string, dirIdentity: string, now = new Date()): string {
  const what = `${path} appeared in the git directory ${dirname(path)} while the sandboxed server could write there, and git outside the sandbox would run what it says`;
  return setAside(dirname(path), Buffer.from(basename(path)), dirIdentity, what, now);
}

/**
 * The same for an entry of `dir` whose name is not UTF-8 (so not a path in a string): a
 * directory that git could take for a repository, in the person's work tree (deny-watch.ts).
 */
export function setAsideUnnamed(
  dir: string,
  name: Buffer,
  dirIdentity: string,
  now = new Date(),
): string {
  const what = `${join(dir, shellBytes(name))} (a name that is not UTF-8) appeared in a repository's work tree while the sandboxed server could write there, and nothing can say what git outside the sandbox would find in it`;
  return setAside(dir, name, dirIdentity, what, now, unnamedAsideName(name));
}

function setAside(
  dir: string,
  name: Buffer,
  dirIdentity: string,
  what: string,
  now: Date,
  aside = asideName(name, now),
): string {
  const path = join(dir, name.toString('utf8'));
  let fd: number;
  try {
    fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (err) {
    return `${what}; it could not be moved aside (${(err as Error).message}): remove it before you run git there`;
  }
  try {
    const st = fstatSync(fd);
    if (`${st.dev}:${st.ino}` !== dirIdentity) {
      return `${what}; ${dir} is no longer the directory that was watched, so nothing was moved: look at ${path} before you run git there`;
    }
    const at = Buffer.from(`/proc/self/fd/${fd}/`);
    renameSync(Buffer.concat([at, name]), Buffer.concat([at, aside]));
    return `${what}: moved it aside to ${join(dir, aside.toString('utf8'))} (if you made it yourself, move it back)`;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return `${what}; it is gone again`;
    return `${what}; it could not be moved aside (${(err as Error).message}): remove it before you run git there`;
  } finally {
    closeSync(fd);
  }
}
