/**
 * The paths a server may open in place of one that does not exist, by taking for each missing
 * name an entry of the same directory that it counts as the same name: what
 * `@modelcontextprotocol/server-filesystem` does (its `resolveUnicodeEquivalentPath`). Releases
 * of 2026 compare names under NFC; 2.0.1 also counts every Unicode space separator as a space
 * (U+00A0 or the U+202F macOS puts before "PM" in a screenshot's name, for the space a client
 * types). The path's whole NFC and NFD spellings do not cover this: the names on disk need not
 * all be in one form (`café` in NFC holding `naïve` in NFD), and some names' equivalents are
 * other strings in both forms (KELVIN SIGN is `K` in NFC and NFD alike; a CJK compatibility
 * ideograph is its unified twin; a no-break space is no form of a space). The access decision
 * judges every path found here as well (check-access.ts).
 */
import type { FsView } from './model.js';
import { pathProbe } from './fs.js';
import { childPath } from './paths.js';

/** Past this many equivalent paths a check refuses rather than judge them all. */
export const MAX_EQUIVALENT_PATHS = 16;

/**
 * The name a server compares: NFC, with every Unicode space separator as a space. Two names with
 * the same key are one name to some server.
 */
export function matchKey(name: string): string {
  return name.normalize('NFC').replace(/\p{Zs}/gu, ' ');
}

/**
 * A name that some other name may share its key with: one outside ASCII, or one holding an
 * ASCII character that is the key of another character: the space (every space separator),
 * `;` (GREEK QUESTION MARK, U+037E), `K` (KELVIN SIGN, U+212A) or `` ` `` (GREEK VARIA, U+1FEF).
 * Any other ASCII name is its own only, so its directory need not be read.
 * `test/policies/equivalent-names.test.ts` checks the four against every code point of the ICU
 * in use.
 */
const MAY_HAVE_EQUIVALENT = /[^\p{ASCII}]|[ ;K`]/u;

/** Whether some other name (or path) may be counted as `name` (or this path). */
export function mayHaveEquivalent(name: string): boolean {
  return MAY_HAVE_EQUIVALENT.test(name);
}

/**
 * The paths other than `path` (absolute, lexically normal) that a server may open for it: for
 * each name that does not exist, each entry of its directory with the same key, and below
 * those, the rest of the path found the same way (or, where nothing matches, as written).
 * Empty when `path` exists or no missing name has an equivalent on disk; `'too-many'` past
 * `MAX_EQUIVALENT_PATHS`.
 */
export async function equivalentPaths(fs: FsView, path: string): Promise<string[] | 'too-many'> {
  // Most paths: no name could have an equivalent, and nothing need be asked of the disk.
  if (!mayHaveEquivalent(path)) return [];
  const names = path.split('/').filter((s) => s !== '');
  const probe = pathProbe(fs);
  // The server looks for equivalents only when the path as written is missing.
  if ((await probe.lstat(path)) !== undefined) return [];
  const found: string[] = [];
  const walk = async (dir: string, i: number, changed: boolean): Promise<void> => {
    if (found.length > MAX_EQUIVALENT_PATHS) return;
    if (i === names.length) {
      if (changed) found.push(dir);
      return;
    }
    const name = names[i]!;
    const here = childPath(dir, name);
    if ((await probe.lstat(here)) !== undefined) return walk(here, i + 1, changed);
    const rest = names.slice(i).join('/');
    // Missing as written: a server that takes no equivalent here opens the rest as written.
    if (changed) found.push(childPath(dir, rest));
    if (!mayHaveEquivalent(name)) return;
    const wanted = matchKey(name);
    let entries: string[];
    try {
      entries = (await fs.readdir(dir)).map((e) => e.name);
    } catch {
      return; // unreadable or not a directory: the server cannot look in it either
    }
    for (const entry of entries) {
      // A name that may share its key with no other is its own key: no normalising 100,000
      // plain names of a big directory on a check.
      const same = mayHaveEquivalent(entry) ? matchKey(entry) === wanted : entry === wanted;
      if (same && entry !== name) await walk(childPath(dir, entry), i + 1, true);
    }
  };
  await walk('/', 0, false);
  return found.length > MAX_EQUIVALENT_PATHS ? 'too-many' : found;
}
