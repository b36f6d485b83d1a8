/**
 * Paths that mean something else in each process. Under `/proc`, `self`, `thread-self` and each
 * process's `cwd`, `root` and `fd/N` are links the kernel resolves for the process that follows
 * them: the daemon's `/proc/self/cwd` is its own working directory, not the server's, so a check
 * made in the daemon would judge another file than the one the server opens. `/dev/fd` and
 * `/dev/stdin` lead there too, and so may any link a server makes in its writable root. A pid
 * directory names another process in a sandbox's own pid namespace, so nothing under `/proc` is
 * judged at all: such a path is refused, and the person gives the path it leads to.
 */
import { linksOnTheWay } from '../common/links-on-the-way.js';
import { isInsideOrEqual } from '../common/segments.js';
import type { FsView } from './model.js';
import { normalizeLexically } from './paths.js';

const PROC = '/proc';

const WHY =
  "/proc's entries lead somewhere else in each process, so no check can tell which file the server would open; give the path it leads to";

/**
 * Why `path` (absolute, `..` as written) is refused for going through `/proc`, or undefined.
 * `canonical`, where known, is where the daemon resolved it: when it equals the path as written,
 * no link was followed and nothing more is read; else each link on the way is looked at, `..`
 * taken where the kernel takes it.
 */
export async function throughProc(
  fs: FsView,
  path: string,
  canonical?: string,
): Promise<string | undefined> {
  const written = normalizeLexically(path);
  if (isInsideOrEqual(written, PROC)) return `${path} is under /proc: ${WHY}`;
  if (canonical !== undefined && isInsideOrEqual(canonical, PROC)) {
    return `${path} leads to ${canonical}, under /proc: ${WHY}`;
  }
  if (canonical === written) return undefined;
  // Without a way to read links nothing shows where they lead: refused, not guessed.
  if (fs.readlink === undefined) return `${path} goes through a link that cannot be read here`;
  const readlink = fs.readlink.bind(fs);
  const links = await linksOnTheWay(path, { lstat: (p) => fs.lstat(p), readlink });
  const inProc = links.find((link) => isInsideOrEqual(link, PROC));
  if (inProc !== undefined) return `${path} goes through ${inProc}, a link under /proc: ${WHY}`;
  return undefined;
}
