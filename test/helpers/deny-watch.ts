/** The proxy's watch for denied paths (proxy/deny-watch.ts) over a fresh root, as tests set it up. */
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Test } from 'tap';
import type { Root } from '../../common/types.js';
import { DenyWatch, type DeniedPath, type DenyWatchOptions } from '../../proxy/deny-watch.js';
import { waitFor } from './poll.js';
import { ownedShortDir } from './proxy.js';

const quiet = { error() {}, warn() {}, info() {}, debug() {} };

/** A name `quietNow` writes in the root: it must stay out of what a test expects reported. */
export const isSentinel = (path: string): boolean => /\/sentinel-\d+\.secret$/.test(path);

/**
 * A `DenyWatch` of a new writable root `r` with `**\/.env`, `**\/*.secret` and `more` denied,
 * closed when `t` ends (`roots`: what it watches); `reports` collects what it reports, and
 * `planted` the git code entries it hands on (`onPlanted`, each then moved to `NAME.moved`);
 * `prepare` fills `r` before the watch; with `below`, the root watched is `r/below` (`root`), and
 * `r` what holds it; `options` are the watch's own (`maxRetired`, say). `quietNow` waits until every walk has
 * ended and every event queued so far was read: it writes a denied sentinel file and waits for its
 * report (events arrive in order).
 */
export async function watchedRoot(
  t: Test,
  more: { pattern: string; access: 'all' | 'write' }[] = [],
  prepare: (r: string) => void = () => {},
  below = '',
  options: Partial<DenyWatchOptions> = {},
) {
  const r = ownedShortDir(t);
  prepare(r);
  const root = join(r, below);
  const reports: DeniedPath[] = [];
  const planted: string[] = [];
  const dw = new DenyWatch({
    onDenied: (d) => reports.push(d),
    // Moved aside, as the proxy does (git-plant.ts), so that a walk and an event that both find
    // one report it once.
    onPlanted: (path) => {
      planted.push(path);
      renameSync(path, `${path}.moved`);
      return `planted: ${path}`;
    },
    onPlantedUnnamed: (dir, name) => {
      planted.push(join(dir, name.toString('utf8')));
      return 'planted';
    },
    log: quiet,
    ...options,
  });
  t.teardown(() => dw.close());
  const roots: Root[] = [
    {
      uri: pathToFileURL(root).href,
      _meta: {
        'mcp-roots/readOnly': false,
        'mcp-roots/deny': [
          { pattern: '**/.env', access: 'all' },
          { pattern: '**/*.secret', access: 'all' },
          ...more,
        ],
      },
    },
  ];
  await dw.update(roots);
  const count = (p: string) => reports.filter((d) => d.path === p).length;
  let sentinels = 0;
  const quietNow = async () => {
    await dw.settled();
    const s = join(root, `sentinel-${++sentinels}.secret`);
    writeFileSync(s, '');
    await waitFor(() => count(s) === 1, 30_000, `the report of ${s}`);
    await dw.settled();
  };
  return { r, root, roots, reports, planted, dw, count, quietNow };
}
