/**
 * `npx NAME` runs a command before it runs a package: npm's exec (libnpmexec) first looks for
 * `node_modules/.bin/NAME` in the working directory and each directory above it, and runs that
 * file if there is one; only then is NAME a package name to fetch. A command's name is often not
 * its package's (`mcp-server-filesystem` is a bin of `@modelcontextprotocol/server-filesystem`,
 * while the npm package of that name is someone else's), so the proxy looks where npx looks.
 */
import { lstat, realpath, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { isStrictlyInside } from '../common/segments.js';

/** The `node_modules/.bin/NAME` npx would run from `cwd`, or undefined. */
export async function localBin(name: string, cwd: string): Promise<string | undefined> {
  // A name with a slash is a package spec or a path, never a file in `.bin` (nor may it step out).
  if (name.includes('/') || name === '.' || name === '..' || name === '') return undefined;
  for (let d = cwd; ; d = dirname(d)) {
    const p = join(d, 'node_modules', '.bin', name);
    try {
      // As npm: a file, through its link (a dangling link is passed over).
      if ((await stat(p)).isFile()) return p;
    } catch {
      // not here
    }
    if (dirname(d) === d) return undefined;
  }
}

/**
 * The file `bin` (found by `localBin`) leads to, if it stays in a package of the `node_modules`
 * it was found in, as npm's own bin links do; else undefined. The working directory may be a root
 * the server wrote in an earlier session: a link it made there must not choose a file elsewhere
 * for the sandbox to show (the rule program.ts keeps for a `node_modules` that is a link).
 */
export async function localBinTarget(bin: string): Promise<string | undefined> {
  const modules = dirname(dirname(bin));
  try {
    if (!(await lstat(modules)).isDirectory()) return undefined;
    const [file, inside] = [await realpath(bin), await realpath(modules)];
    if (!isStrictlyInside(file, inside)) return undefined;
    // Inside a package there (NAME/..., @scope/NAME/...), where npm's links lead: the package the
    // sandbox then shows is that one (program.ts looks no higher), not the project around it.
    const [first, ...rest] = relative(inside, file).split(sep);
    return rest.length > (first!.startsWith('@') ? 1 : 0) ? file : undefined;
  } catch {
    return undefined;
  }
}
