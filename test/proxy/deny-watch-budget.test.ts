/**
 * The deny watch's limit on watched directories (`maxDirs`, MCP_ROOTS_PROXY_WATCH_DIRS). **Was a
 * hole, found by an attacker pass:** past the limit the watch only warned, so a sandboxed server
 * made some 54,000 directories (slowly enough not to flood), and a git repository it then planted
 * in the person's work tree was neither watched nor moved aside. Now a tree the first walk found
 * that big is the person's (a warning, as before: the README's limit), but one that grows past
 * the limit afterwards stops the server, and the next walk of the roots says why it must not
 * start (`blindSpot`, which the supervisor turns into a refusal).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t, { type Test } from 'tap';
import { DenyWatch, type DeniedPath } from '../../proxy/deny-watch.js';
import { startBoxed } from '../helpers/boxed-server.js';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';

const quiet = { error() {}, warn() {}, info() {}, debug() {} };

/** A watch of the root `r` (made with `dirs` directories) that may watch `max` directories. */
async function budgeted(t: Test, dirs: number, max: number) {
  const r = ownedShortDir(t);
  for (let i = 0; i < dirs; i++) mkdirSync(join(r, `d${i}`));
  const reports: DeniedPath[] = [];
  const warnings: string[] = [];
  const dw = new DenyWatch({
    onDenied: (d) => reports.push(d),
    onPlanted: () => 'planted',
    onPlantedUnnamed: () => 'planted',
    log: { ...quiet, warn: (m: string) => warnings.push(m) },
    maxDirs: max,
  });
  t.teardown(() => dw.close());
  const roots = [
    {
      uri: pathToFileURL(r).href,
      _meta: {
        'mcp-roots/readOnly': false,
        'mcp-roots/deny': [{ pattern: '**/.env', access: 'all' as const }],
      },
    },
  ];
  await dw.update(roots);
  return { r, dw, roots, reports, warnings };
}

void t.test('a tree that grows past the limit during the session fails closed', async (t) => {
  const w = await budgeted(t, 3, 8);
  t.equal(w.dw.blindSpot(), undefined, 'within the limit at the start');
  for (let i = 0; i < 10; i++) mkdirSync(join(w.r, `new${i}`));
  await waitFor(() => w.reports.length > 0, 30_000, 'the report');
  await w.dw.settled();
  t.match(w.reports[0]?.why, /more than 8 directories now, more than when this session began/);
  t.equal(w.reports[0]?.access, 'all', 'the server is stopped as for a path denied for reading');
  // The next plan walks the roots again: the start is refused, with the way out.
  await w.dw.update(w.roots);
  t.match(w.dw.blindSpot(), /raise MCP_ROOTS_PROXY_WATCH_DIRS/, 'the start is refused');
});

void t.test('a tree past the limit before any server ran is the person’s: a warning', async (t) => {
  const w = await budgeted(t, 12, 8);
  t.equal(w.dw.blindSpot(), undefined, 'the start goes ahead');
  t.match(w.warnings.join('\n'), /too many directories/, 'with a warning');
  for (let i = 0; i < 3; i++) mkdirSync(join(w.r, `new${i}`));
  await new Promise((resolve) => setTimeout(resolve, 200));
  await w.dw.settled();
  t.same(w.reports, [], 'and growth beyond it stops nothing, as before');
});

void t.test(
  'end to end: a sandboxed server that grows its root past the limit is stopped and not started again',
  async (t) => {
    const dir = ownedShortDir(t);
    const r = join(dir, 'r');
    mkdirSync(join(r, 'a'), { recursive: true });
    const d = await startDaemon(t, `version: 1\nservers:\n  h:\n    roots:\n      - path: ${r}\n`, {
      dir,
    });
    const h = await startBoxed(t, d.socket, { MCP_ROOTS_PROXY_WATCH_DIRS: '20' });
    // The proxy may stop the server before it answers: the call then fails, which is as good.
    await h
      .call('attempt', {
        action: 'shell',
        ref: `mkdir ${r}/junk && cd ${r}/junk && mkdir $(seq 1 40)`,
      })
      .catch(() => undefined);
    await waitFor(
      () => /more than 20 directories now/.test(h.stderr()),
      30_000,
      'the proxy stops it',
    );
    await waitFor(
      () => /It was not started/.test(h.stderr()),
      30_000,
      'and refuses to start it again',
    );
    const refused = await h
      .call('attempt', { action: 'read', ref: `${r}/a` })
      .catch((err: Error) => ({ text: err.message }));
    t.match(
      refused.text,
      /more than 20 directories now.*raise MCP_ROOTS_PROXY_WATCH_DIRS/,
      'the host is told why and what to do',
    );
  },
);
