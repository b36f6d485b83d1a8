/**
 * Whether a package in npx's cache may run under --sandbox. The proxy runs its bin and the sandbox
 * shows its package read-only (program.ts), so both must be what npm installed there: not a place
 * the server may write (it would leave a package of a higher version, or edit the one there, and
 * choose what runs next start), and not a bin that leads out of its package (`"bin":
 * "../../../.ssh/id_rsa"`, or a link to a directory), which would show that path to the server.
 */
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isInsideOrEqual, isStrictlyInside } from '../common/segments.js';
import { real } from './written-by.js';

/**
 * Why the cached package `dir` (in `entry`, `_npx/HASH` of `cache`; `pkg` is name@version) may not
 * run, or undefined.
 */
export async function cacheEntryRefusal(
  at: { cache: string; entry: string; dir: string; bin: string; pkg: string },
  serverOwn: readonly string[],
): Promise<string | undefined> {
  const [cache, entry, dir] = await Promise.all([real(at.cache), real(at.entry), real(at.dir)]);
  const file = await real(join(at.dir, at.bin));
  // A writable path inside the cache counts too: the package's own node_modules, say, or npm's
  // store of downloads (_cacache), from which the next `npx -y` outside the sandbox installs.
  const own = serverOwn.find(
    (o) =>
      [cache, entry, dir, file].some((p) => p !== undefined && isInsideOrEqual(p, o)) ||
      (cache !== undefined && isInsideOrEqual(o, cache)),
  );
  if (own !== undefined) {
    return `its copy in npx's cache, ${at.dir}, lies where the server may write (${own}: a root, or a sandbox.write path, and the cache overlap): a package it left there would choose what runs and what the sandbox shows. Keep npm's cache (${at.cache}) out of the server's roots and sandbox.write paths (npm_config_cache names another), or name the program in the command instead (node /path/to/its/package/dist/index.js)`;
  }
  const isFile = file !== undefined && (await stat(file).catch(() => undefined))?.isFile() === true;
  if (dir === undefined || !isFile || !isStrictlyInside(file, dir)) {
    return `the bin ${JSON.stringify(at.bin)} of its copy in npx's cache, ${at.dir}, leads to ${file ?? 'nothing'}, which is not a file inside that package: the sandbox shows only the package's own files, and this one was not installed so by npm. Remove ${at.entry} and cache the package again with  (cd ~ && npx -y -p ${at.pkg} true)`;
  }
  return undefined;
}
