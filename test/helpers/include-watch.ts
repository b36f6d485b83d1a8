/** The proxy's watch of include bases (proxy/include-watch.ts) over a fresh root, as tests set it up. */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Test } from 'tap';
import type { Root } from '../../common/types.js';
import { IncludeWatch } from '../../proxy/include-watch.js';
import { ownedShortDir } from './proxy.js';

/**
 * An `IncludeWatch` of a new writable root `r` that includes `r/conf.d/*.yaml` (`conf.d` made),
 * closed when `t` ends; `changed` collects what it reports, `roots` is what it watches.
 */
export async function watchedIncludes(t: Test) {
  const r = realpathSync(ownedShortDir(t));
  mkdirSync(join(r, 'conf.d'));
  const changed: string[] = [];
  const iw = new IncludeWatch({ onChanged: (p) => changed.push(p) });
  t.teardown(() => iw.close());
  const roots: Root[] = [
    {
      uri: pathToFileURL(r).href,
      _meta: { 'mcp-roots/readOnly': false, 'mcp-roots/include': [`${r}/conf.d/*.yaml`] },
    },
  ];
  await iw.update(roots);
  return { r, roots, changed, iw };
}
