/**
 * Whether a file the proxy is about to run or show lies where the server may write: there,
 * reached through a link there, or through any link on the way that lies there. Such a file may
 * be the server's own work from an earlier session, so it must not choose what the sandbox shows
 * (program.ts, npx.ts).
 */
import { lstat, readlink, realpath } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { linksOnTheWay } from '../common/links-on-the-way.js';
import { isInsideOrEqual } from '../common/segments.js';

/** `realpath`, or undefined where it fails (missing, a loop, no permission). */
export const real = (p: string): Promise<string | undefined> => realpath(p).catch(() => undefined);

/**
 * The path of `serverOwn` (canonical paths the server may write) that holds `path` as written,
 * its directory where it leads, the file it leads to, or a link on the way; or undefined.
 */
export async function writtenBy(
  path: string,
  serverOwn: readonly string[] | undefined,
): Promise<string | undefined> {
  if (serverOwn === undefined || serverOwn.length === 0) return undefined;
  const written = resolve(path);
  const [dir, file, links] = await Promise.all([
    real(dirname(written)),
    real(written),
    // Each link met on the way, where it lies: one the server put in the middle of a chain that
    // starts outside its places (`~/tools/x` leading into its root, where it replaced its file
    // with a link elsewhere) chose what the sandbox showed (an attacker pass).
    linksOnTheWay(written, { lstat, readlink }).catch(() => []),
  ]);
  const places = [
    written,
    dir ?? dirname(written),
    ...(file === undefined ? [] : [file]),
    ...links,
  ];
  return serverOwn.find((own) => places.some((p) => isInsideOrEqual(p, own)));
}
