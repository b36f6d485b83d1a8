/**
 * The deny watch's limit on watched directories (`maxDirs`, MCP_ROOTS_PROXY_WATCH_DIRS), and
 * directories it cannot watch. **Was a hole, found by an attacker pass:** past the limit the
 * watch only warned, so a sandboxed server made some 54,000 directories (slowly enough not to
 * flood), and a git repository it then planted in the person's work tree was neither watched nor
 * moved aside; the next pass made a directory of mode 300 (writable, not readable, so not
 * watchable) and planted one there. Now roots past the limit, or a directory of the user's that
 * cannot be watched, stop the server, and a walk of the roots says why it must not start
 * (`blindSpot`, which the supervisor turns into a refusal); at the start too, since a server can
 * have made them in an earlier session. 0 turns the watch off, with a warning.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import t, { type Test } from 'tap';
import { DenyWatch, type DeniedPath } from '../../proxy/deny-watch.js';
import { startBoxed } from '../helpers/boxed-server.js';
import { REPO } from '../helpers/bin.js';
import { startDaemon } from '../helpers/daemon.js';
import { ownedShortDir, waitFor } from '../helpers/proxy.js';
import { createUser, nodeAs } from '../helpers/users.js';

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
  t.match(w.reports[0]?.why, /more than 8 directories \(a server can make that many/);
  t.equal(w.reports[0]?.access, 'all', 'the server is stopped as for a path denied for reading');
  // The next plan walks the roots again: the start is refused, with the way out.
  await w.dw.update(w.roots);
  t.match(w.dw.blindSpot(), /raise MCP_ROOTS_PROXY_WATCH_DIRS/, 'the start is refused');
});

void t.test('roots past the limit at the start: not started, with the way out', async (t) => {
  const w = await budgeted(t, 12, 8);
  t.match(w.dw.blindSpot(), /more than 8 directories .*raise MCP_ROOTS_PROXY_WATCH_DIRS/);
});

void t.test('0 turns the watch off: a warning, and the start goes ahead', async (t) => {
  const w = await budgeted(t, 3, 0);
  t.equal(w.dw.blindSpot(), undefined);
  t.match(w.warnings.join('\n'), /the watch is off/);
});

void t.test("a directory of the user's that cannot be read fails closed", (t) => {
  // Root reads every directory: the watch meets the kernel's refusal only as a user, so it runs
  // as a throwaway one (test/helpers/users.ts), on the built module.
  const user = createUser(t);
  const module = pathToFileURL(join(REPO, 'dist/proxy/deny-watch.js')).href;
  const r = join(user.home, 'r');
  const script = `
import { mkdirSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { DenyWatch } from ${JSON.stringify(module)};
const r = ${JSON.stringify(r)};
mkdirSync(r);
const reports = [];
const quiet = { error() {}, warn() {}, info() {}, debug() {} };
const dw = new DenyWatch({
  onDenied: (d) => reports.push(d.why ?? ''),
  onPlanted: () => '',
  onPlantedUnnamed: () => '',
  log: quiet,
  maxDirs: 100,
});
const roots = [{
  uri: pathToFileURL(r).href,
  _meta: { 'mcp-roots/readOnly': false, 'mcp-roots/deny': [{ pattern: '**/.env', access: 'all' }] },
}];
await dw.update(roots);
mkdirSync(r + '/hidden', { mode: 0o300 });
await new Promise((resolve) => setTimeout(resolve, 300));
await dw.settled();
await dw.update(roots);
console.log(JSON.stringify({ reports, blind: dw.blindSpot() ?? null }));
dw.close();
`;
  const run = nodeAs(user, script);
  t.equal(run.status, 0, run.stderr);
  const out = JSON.parse(run.stdout) as { reports: string[]; blind: string | null };
  t.match(out.reports[0], /it is yours but not readable/, 'made during the session: stopped');
  t.match(out.blind, /it is yours but not readable.*chmod u\+r/, 'and not started again');
  t.end();
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
    await waitFor(() => /more than 20 directories/.test(h.stderr()), 30_000, 'the proxy stops it');
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
      /more than 20 directories.*raise MCP_ROOTS_PROXY_WATCH_DIRS/,
      'the host is told why and what to do',
    );
  },
);
